// The spool on a really full disk (gateway/contract/spool.md, "Full disk"): a real 8 MiB tmpfs, so ENOSPC comes
// from the kernel, not from a size cap (root only: mounting it needs root). What was read is kept, acknowledged
// frames still leave, and reading resumes once the reserve can be made again: with its margin while the file holds
// frames, without it once the spool is drained, whose free pages then go back to the disk (small disks).

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, truncateSync,
  unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { DRAIN_RESERVE_BYTES, RESERVE_BYTES, ROOM_MARGIN_BYTES, Spool, SpoolFull, newFrame } from '../src/spool/index.js';

const NOT_ROOT = process.getuid() === 0 ? false : 'mounting a tmpfs for the full-disk tests needs root';

const frames = (n, start = 0, source = 'G') => Array.from({ length: n }, (_, k) => {
  const i = start + k;
  return newFrame(source, 1_000 + i, 2_000 + i, [['temp_in', i + 0.5], ['light', i]]);
});
const columns = (f) => [f.source, f.ts_ms, f.received_ms, f.metrics, f.vals.toString('hex')];

/** Runs fn(folder) on a real 8 MiB tmpfs (ENOSPC from the kernel, not a size cap), unmounted afterwards. */
function withSmallTmpfs(fn) {
  const base = mkdtempSync(join(tmpdir(), 'spool-disk-'));
  const mount = join(base, 'small-disk');
  mkdirSync(mount);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', mount]);
  try {
    fn(mount);
  } finally {
    spawnSync('umount', ['-l', mount]);
    rmSync(base, { recursive: true, force: true });
  }
}

/** 60,000 frames (ids 1-60,000) into spool, its WAL copied into the file as it grows: a file of over 2 MiB. */
function grow(spool) {
  for (let i = 0; i < 30; i++) {
    spool.commit(frames(2000, i * 2000), []);
    spool.checkpoint();
  }
}

/** Writes to a file in folder until the disk refuses (ENOSPC); returns it. Called again, it takes what was freed. */
function fillDisk(folder) {
  const filler = join(folder, 'filler');
  const fd = openSync(filler, 'a');
  try {
    for (const size of [65536, 512]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if (size === 65536) assert.equal(error.code, 'ENOSPC');
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

describe('a really full disk', { skip: NOT_ROOT }, () => {
  it('keeps what was read and still drains', () => withSmallTmpfs((disk) => {
    const path = join(disk, 'spool.sqlite');
    const spool = new Spool(path);
    assert.equal(spool.diskLow, false);
    const filler = fillDisk(disk);
    const committed = [];
    for (let i = 0; i < 10_000 && !spool.diskLow; i++) { // commits go on into the reserve's room
      const group = frames(20, i * 20);
      spool.commit(group, []);
      committed.push(...group);
    }
    assert.equal(spool.diskLow, true);
    assert.equal(spool.room(), 'disk');
    // the reserve's first part went to the frames; its last part is kept for deleting acknowledged frames
    assert.equal(statSync(spool.reservePath).size, DRAIN_RESERVE_BYTES);
    for (let i = 0; i < 3; i++) { // the reads the inputs held when reading paused
      const group = frames(40, 10 ** 6 + i * 40);
      spool.commit(group, []);
      committed.push(...group);
    }
    spool.close(); // its checkpoint may fail on the full disk: the WAL keeps the frames

    const reopened = new Spool(path); // a restart on the still-full disk
    const taken = reopened.take(0, 10 ** 6);
    assert.deepEqual(taken.map(columns), committed.map(columns));
    reopened.commit([], [[taken[0].id, taken.at(-1).id]]); // acknowledged frames still leave the spool
    assert.equal(reopened.depth, 0); // drained: its own room may be enough for the reserve now (no margin)
    unlinkSync(filler);
    assert.equal(reopened.room(), null);
    assert.equal(statSync(reopened.reservePath).size, RESERVE_BYTES);
    reopened.close();
  }));

  it('leaves nothing half-written when the disk refuses a commit', () => withSmallTmpfs((disk) => {
    const spool = new Spool(join(disk, 'spool.sqlite'));
    fillDisk(disk);
    let stored = 0;
    assert.throws(() => { // into the reserve's room, then refused once that is used up too
      for (let i = 0; i < 10_000; i++) {
        spool.commit(frames(20, i * 20), []);
        stored += 20;
      }
    }, (error) => error instanceof SpoolFull && error.capReached === false);
    assert.equal(spool.room(), 'disk');
    assert.equal(spool.depth, stored);
    assert.equal(spool.take(0, 10 ** 6).length, stored);
    spool.close();
  }));

  it('opens on a full disk without giving up the reserve', () => withSmallTmpfs((disk) => {
    const path = join(disk, 'spool.sqlite');
    const spool = new Spool(path);
    spool.commit(frames(10), []);
    spool.close();
    assert.equal(existsSync(`${path}.reserve`), true);
    fillDisk(disk);
    const reopened = new Spool(path); // the WAL index needed room: the reserve's first part went to it
    assert.equal(statSync(reopened.reservePath).size, DRAIN_RESERVE_BYTES);
    assert.equal(reopened.diskLow, true);
    assert.equal(reopened.depth, 10);
    reopened.close();
  }));

  it('still drains after a restart on a disk that stayed full', () => withSmallTmpfs((disk) => {
    // New frames are refused (they wait in the port), but the reserve's last part, never given to new frames,
    // lets acknowledged frames leave.
    const path = join(disk, 'spool.sqlite');
    let spool = new Spool(path);
    spool.commit(frames(600), []);
    fillDisk(disk);
    assert.throws(() => {
      for (let start = 600; start < 10 ** 6; start += 5) { // into the reserve's first part, until refused
        spool.commit(frames(5, start), []);
        fillDisk(disk); // whatever the spool gives back (its WAL) is taken at once
      }
    }, (error) => error instanceof SpoolFull && error.capReached === false);
    spool.close();
    fillDisk(disk);
    spool = new Spool(path);
    fillDisk(disk); // what opening took from the reserve and did not use
    assert.throws(() => spool.commit(frames(161, 10 ** 6), []), SpoolFull);
    const taken = spool.take(0, 10 ** 6);
    assert.ok(taken.length === spool.depth && taken.length > 600);
    assert.throws(() => spool.commit(frames(161, 10 ** 6), [[taken[0].id, taken.at(-1).id]]), SpoolFull);
    assert.equal(spool.depth, 0);
    assert.equal(spool.room(), 'disk');
    spool.close();
  }));

  it('drains in steps on a disk that stays full', () => withSmallTmpfs((disk) => {
    // No reserve left and 128 KiB free: deleting every acknowledged frame in one transaction needs megabytes of
    // WAL, so the commit deletes them a few pages at a time instead.
    const path = join(disk, 'spool.sqlite');
    let spool = new Spool(path);
    for (let i = 0; i < 60; i++) spool.commit(frames(1000, i * 1000), []);
    assert.ok(spool.usedBytes() > 2 << 20);
    spool.close();
    spool = new Spool(path);
    unlinkSync(spool.reservePath);
    const filler = fillDisk(disk);
    truncateSync(filler, statSync(filler).size - (128 << 10));
    const taken = spool.take(0, 10 ** 6);
    const everything = [[taken[0].id, taken.at(-1).id]];
    assert.throws(() => spool._store.commit([], everything, []), SpoolFull); // the one big transaction does not fit
    spool.commit([], everything);
    assert.equal(spool.depth, 0);
    assert.deepEqual(spool.take(0, 10), []);
    assert.throws(() => spool.commit(frames(5000, 10 ** 6), []), SpoolFull); // new frames wait; acked ones go
    spool.close();
    const reopened = new Spool(path);
    assert.equal(reopened.depth, 0);
    reopened.close();
  }));
  it('resumes on a drained spool as soon as the reserve fits: the margin is waived', () => withSmallTmpfs((disk) => {
    for (const spooled of [0, 1]) {
      const path = join(disk, `spool-${spooled}.sqlite`);
      const spool = new Spool(path);
      spool.commit(frames(spooled), []);
      spool._room.releaseReserve(0); // as a commit that found the disk full: reading pauses
      const filler = fillDisk(disk);
      // Room for the reserve and half the margin: enough for an empty spool, not for one holding a frame.
      truncateSync(filler, statSync(filler).size - RESERVE_BYTES - ROOM_MARGIN_BYTES / 2);
      assert.equal(spool.room(), spooled ? 'disk' : null, `${spooled} frames spooled`);
      spool.close();
      unlinkSync(filler);
      rmSync(spool.reservePath, { force: true });
    }
  }));

  it('gives a drained spool\'s free pages back to a low disk, then resumes', () => withSmallTmpfs((disk) => {
    // A spool that grew while Cassandra was away keeps its size once drained (free pages inside the file): on a small
    // disk that can be the room the reserve needs.
    const path = join(disk, 'spool.sqlite');
    const spool = new Spool(path);
    grow(spool);
    const grown = statSync(path).size;
    assert.ok(grown > 2 << 20, `${grown} bytes`);
    spool._room.releaseReserve(0);
    const filler = fillDisk(disk);
    truncateSync(filler, statSync(filler).size - (64 << 10)); // a little room: the VACUUM's few pages fit
    spool.commit([], [[1, 60_000]]); // drained: the rows go, the pages stay in the file
    assert.equal(spool.depth, 0);
    assert.ok(statSync(path).size >= grown);
    assert.equal(spool.room(), null); // VACUUM, the WAL cut: the disk got the file's free pages back
    assert.ok(statSync(path).size < 64 << 10, `${statSync(path).size} bytes`);
    assert.equal(statSync(spool.reservePath).size, RESERVE_BYTES);
    spool.commit(frames(3, 10 ** 6), []); // and it goes on as before
    assert.deepEqual(spool.take(0, 10).map(columns), frames(3, 10 ** 6).map(columns));
    spool.close();
  }));

  it('tries the VACUUM again at the next room check when the disk has no room for it', () => withSmallTmpfs((disk) => {
    const path = join(disk, 'spool.sqlite');
    const spool = new Spool(path);
    grow(spool);
    spool.commit([], [[1, 60_000]]);
    spool._store.db.pragma('wal_checkpoint(TRUNCATE)'); // cutting the WAL gives nothing back any more
    spool._room.releaseReserve(0);
    const filler = fillDisk(disk);
    assert.equal(spool.room(), 'disk'); // no room even for the VACUUM's pages
    assert.ok(statSync(path).size > 2 << 20);
    truncateSync(filler, statSync(filler).size - (64 << 10));
    assert.equal(spool.room(), null);
    spool.close();
  }));
});

// A WAL that holds the disk (spool.md, "Full disk" and "A clean stop"): pages past the database file's end can only be
// checkpointed by growing the file, which a full disk refuses; the reserve's room lets the checkpoint through, so a
// stop leaves no WAL, and a WAL a clean stop did leave is not taken for a crash.
describe('a WAL that holds the disk', { skip: NOT_ROOT }, () => {
  const wal = (path) => `${path}-wal`;

  it('is cut at the stop with the reserve, and the drained spool shrinks', () => withSmallTmpfs((disk) => {
    const path = join(disk, 'spool.sqlite');
    const spool = new Spool(path);
    const committed = [];
    for (let i = 0; i < 20; i++) { // no checkpoint: the WAL holds every new page, the database file none of them
      const group = frames(500, i * 500);
      spool.commit(group, []);
      committed.push(...group);
    }
    assert.ok(statSync(wal(path)).size > 500 << 10 && statSync(path).size < 64 << 10);
    const filler = fillDisk(disk);
    assert.equal(spool.close(), 0);
    assert.equal(existsSync(wal(path)), false, "the stop's checkpoint got the reserve's room");
    assert.ok(existsSync(`${path}.clean-stop`));
    fillDisk(disk); // what the cut WAL gave back

    const reopened = new Spool(path);
    assert.equal(reopened.uncleanStop, false);
    assert.equal(existsSync(`${path}.clean-stop`), false);
    const taken = reopened.take(0, 10 ** 6);
    assert.deepEqual(taken.map(columns), committed.map(columns));
    reopened.commit([], [[taken[0].id, taken.at(-1).id]]); // the disk still full: acknowledged frames leave
    assert.equal(reopened.depth, 0);
    unlinkSync(filler);
    assert.equal(reopened.room(), null);
    assert.ok(statSync(path).size < 64 << 10, 'a drained spool gives its pages back before reading resumes');
    reopened.close();
  }));

  it('is cut after every commit on a low disk, the last part kept but for a stop', () => withSmallTmpfs((disk) => {
    const path = join(disk, 'spool.sqlite');
    const spool = new Spool(path);
    fillDisk(disk);
    spool.commit(frames(2000), []); // refused, then given the reserve's first part
    assert.equal(spool.diskLow, true);
    assert.equal(spool.room(), 'disk');
    assert.equal(statSync(wal(path)).size, 0);
    assert.equal(statSync(spool.reservePath).size, DRAIN_RESERVE_BYTES);
    spool.stopping(); // at a stop the frames already read take the last part too
    spool.commit(frames(200, 2000), []);
    assert.equal(spool.close(), 0);
    assert.equal(existsSync(wal(path)), false);
    const reopened = new Spool(path);
    assert.equal(reopened.depth, 2200);
    reopened.close();
  }));
});

describe('the clean-stop marker', () => {
  it('makes a WAL left at open an unclean stop only when it is not there', () => {
    const folder = mkdtempSync(join(tmpdir(), 'spool-clean-stop-'));
    try {
      const path = join(folder, 'spool.sqlite');
      const spool = new Spool(path);
      spool.commit(frames(10), []);
      for (const name of ['crashed', 'stopped']) { // the files as a crash leaves them: the WAL not checkpointed
        mkdirSync(join(folder, name));
        for (const suffix of ['', '-wal']) {
          copyFileSync(`${path}${suffix}`, join(folder, name, `spool.sqlite${suffix}`));
        }
      }
      spool.close();
      const again = new Spool(path);
      assert.equal(again.uncleanStop, false);
      again.close();
      const crashed = new Spool(join(folder, 'crashed', 'spool.sqlite'));
      assert.equal(crashed.uncleanStop, true);
      crashed.close();
      const marker = join(folder, 'stopped', 'spool.sqlite.clean-stop');
      closeSync(openSync(marker, 'w')); // a clean stop whose checkpoint found no room
      const stopped = new Spool(join(folder, 'stopped', 'spool.sqlite'));
      assert.equal(stopped.uncleanStop, false);
      assert.equal(existsSync(marker), false, 'taken away before the run writes');
      assert.equal(stopped.depth, 10);
      stopped.close();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
