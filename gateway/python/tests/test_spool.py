"""The SQLite spool on a real file: commit, take, acknowledge, reopen, and the size cap."""

import os
import sqlite3

import pytest

from conftest import fill_disk

from telemetry_gateway.spool import DRAIN_RESERVE_BYTES, FORMAT_VERSION, RESERVE_BYTES, NewFrame, Spool, SpoolFormatError, SpoolFull
from telemetry_gateway.spool import room as room_module


def frames(n, start=0, source="G"):
    return [NewFrame.of(source, 1_000 + i, 2_000 + i, (("temp_in", i + 0.5), ("light", float(i))))
            for i in range(start, start + n)]


def test_commit_take_ack_and_reopen(tmp_path):
    path = tmp_path / "spool.sqlite"
    spool = Spool(path)
    spool.commit(frames(5), [])
    taken = spool.take(after_id=0, limit=3)
    assert [f.ts_ms for f in taken] == [1000, 1001, 1002]
    assert taken[0].values == (("temp_in", 0.5), ("light", 0.0))
    assert [f.ts_ms for f in spool.take(after_id=taken[-1].id, limit=10)] == [1003, 1004]
    spool.commit([], [(taken[0].id, taken[-1].id)])
    assert spool.depth == 2
    spool.close()

    reopened = Spool(path)
    assert reopened.depth == 2
    assert [f.ts_ms for f in reopened.take(0, 10)] == [1003, 1004]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("count", [1, 7, 8, 41, 128, 169, 300])
def test_every_group_size_is_stored_whole_and_taken_back_in_order(tmp_path, count):
    # commits use multi-row INSERTs of a few fixed sizes: every size is stored whole, in order
    spool = Spool(tmp_path / "s.sqlite")
    spool.commit(frames(2), [])
    spool.commit(frames(count, start=2, source="a-b_C9"), [])
    taken = spool.take(after_id=0, limit=count + 10)
    assert spool.depth == len(taken) == count + 2
    assert [f.id for f in taken] == sorted({f.id for f in taken})
    assert [(f.source, f.ts_ms, f.received_ms, f.values) for f in taken] == \
        [("G" if i < 2 else "a-b_C9", 1_000 + i, 2_000 + i, (("temp_in", i + 0.5), ("light", float(i))))
         for i in range(count + 2)]
    assert spool.take(after_id=taken[count - 1].id, limit=2) == taken[count:]
    assert spool.take(after_id=taken[-1].id, limit=5) == []


def test_ids_only_grow_even_after_the_spool_emptied(tmp_path):
    spool = Spool(tmp_path / "s.sqlite")
    spool.commit(frames(3), [])
    last = spool.take(0, 10)[-1].id
    spool.commit([], [(0, last)])
    spool.commit(frames(1, start=3), [])
    assert spool.take(after_id=last, limit=10)[0].id > last


def test_acking_an_unknown_id_does_not_skew_the_depth(tmp_path):
    spool = Spool(tmp_path / "s.sqlite")
    spool.commit(frames(2), [])
    spool.commit([], [(999, 1005)])
    assert spool.depth == 2


def test_reading_pauses_at_the_cap_and_sqlite_refuses_only_past_the_headroom(tmp_path):
    spool = Spool(tmp_path / "s.sqlite", max_bytes=64 * 1024)
    assert spool.room() is None
    group = 0
    while spool.room() is None:
        spool.commit(frames(50, start=group * 50), [])
        group += 1
    assert spool.room() == "cap" and spool.used_bytes() >= 64 * 1024
    at_cap = spool.depth
    spool.commit(frames(500, start=10**5), [])  # what was read before the pause still fits: the headroom
    assert spool.depth == at_cap + 500
    with pytest.raises(SpoolFull) as full:
        for i in range(1000):
            spool.commit(frames(500, start=2 * 10**5 + i * 500), [])
    assert full.value.cap_reached
    depth = spool.depth
    assert depth == len(spool.take(0, 10**6)) > 0  # the failed commit left nothing half-written
    assert spool.drop_oldest(depth - 10) == depth - 10
    assert spool.room() is None  # freed pages count as room and are reused
    spool.commit(frames(50, start=10**6), [])
    assert spool.depth == 60


def test_lift_cap_lets_a_shutdown_keep_what_was_read(tmp_path):
    spool = Spool(tmp_path / "s.sqlite", max_bytes=64 * 1024)
    with pytest.raises(SpoolFull):
        for i in range(1000):
            spool.commit(frames(500, start=i * 500), [])
    depth = spool.depth
    spool.lift_cap()
    spool.commit(frames(500, start=10**6), [])
    assert spool.depth == depth + 500


def test_a_reserve_file_is_kept_beside_the_spool(tmp_path):
    spool = Spool(tmp_path / "s.sqlite")
    assert spool.reserve_path.stat().st_size == RESERVE_BYTES
    assert spool.reserve_path.stat().st_blocks * 512 >= RESERVE_BYTES  # allocated, not sparse
    assert not spool.disk_low and spool.room() is None


def test_receipt_stamps_survive_a_restart(tmp_path):
    from telemetry_gateway.timestamps import Stamper
    path = tmp_path / "s.sqlite"
    spool = Spool(path)
    stamper = Stamper(60_000, 86_400_000)
    burst = [stamper.stamp("G", None, 5_000).ts_ms for _ in range(50)]  # 50 frames in one ms: 5000..5049
    spool.commit(frames(1), [], stamper.take_changed())
    spool.close()  # the process dies; its clock-time successor starts at the same wall time
    resumed = Stamper(60_000, 86_400_000, last_receipt=Spool(path).last_receipt_stamps())
    assert resumed.stamp("G", None, 5_010).ts_ms == burst[-1] + 1  # never reuses a key stamped before


def test_a_format_1_spool_is_converted_in_place(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript("""
        CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL,
                             received_ms INTEGER NOT NULL, vals TEXT NOT NULL);
        CREATE TABLE receipt_stamps (source TEXT PRIMARY KEY, last_ts_ms INTEGER NOT NULL);
        INSERT INTO frames VALUES (7, 'G', 1000, 1001, '[["temp_in",21.5],["light",3]]');
        INSERT INTO receipt_stamps VALUES ('G', 1000);
    """)
    old.commit()
    old.close()
    spool = Spool(path)
    assert [(f.id, f.source, f.ts_ms, f.received_ms, f.values) for f in spool.take(0, 10)] == \
        [(7, "G", 1000, 1001, (("temp_in", 21.5), ("light", 3.0)))]
    assert spool.last_receipt_stamps() == {"G": 1000}
    spool.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION


def test_a_spool_from_a_newer_gateway_is_refused(tmp_path):
    path = tmp_path / "new.sqlite"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {FORMAT_VERSION + 1}")
    with pytest.raises(SpoolFormatError, match="upgrade the gateway"):
        Spool(path)


def test_commits_never_checkpoint_and_checkpoint_copies_the_whole_wal(tmp_path):
    # SQLite's automatic checkpoint would run inside the commit that crosses 1,000 WAL pages; here only
    # checkpoint() does, from its own connection.
    path = tmp_path / "s.sqlite"
    spool = Spool(path)
    for group in range(300):
        spool.commit(frames(100, start=group * 100), [])
    wal_pages = (path.parent / (path.name + "-wal")).stat().st_size // 4096
    assert wal_pages > 1_000
    in_wal, copied = spool.checkpoint()
    assert in_wal > 1_000 and copied == in_wal
    spool.commit(frames(1, start=30_000), [])  # a commit after a complete checkpoint starts the WAL over
    assert spool.checkpoint()[0] < 10
    assert spool.depth == 30_001
    spool.close()



def test_a_really_full_disk_keeps_what_was_read_and_still_drains(small_tmpfs):
    path = small_tmpfs / "spool.sqlite"
    spool = Spool(path)
    assert not spool.disk_low
    filler = fill_disk(small_tmpfs)
    committed = []
    for i in range(10_000):  # commits go on into the reserve's room
        group = frames(20, start=i * 20)
        spool.commit(group, [])
        committed += group
        if spool.disk_low:
            break
    # the reserve's first part went to the frames; its last part is kept for deleting acknowledged frames
    assert spool.disk_low and spool.room() == "disk"
    assert spool.reserve_path.stat().st_size == DRAIN_RESERVE_BYTES
    for i in range(3):  # the reads the inputs held when reading paused
        group = frames(40, start=10**6 + i * 40)
        spool.commit(group, [])
        committed += group
    spool.close()  # its checkpoint may fail on the full disk: the WAL keeps the frames

    reopened = Spool(path)  # a restart on the still-full disk
    taken = reopened.take(0, 10**6)
    assert [(f.source, f.ts_ms, f.received_ms, f.metrics, f.vals) for f in taken] == [tuple(f) for f in committed]
    reopened.commit([], [(taken[0].id, taken[-1].id)])  # acknowledged frames still leave the spool
    assert reopened.depth == 0
    filler.unlink()
    assert reopened.room() is None and reopened.reserve_path.stat().st_size == RESERVE_BYTES
    reopened.close()


def test_a_commit_the_disk_refuses_leaves_nothing_half_written(small_tmpfs):
    spool = Spool(small_tmpfs / "spool.sqlite")
    fill_disk(small_tmpfs)
    stored = 0
    with pytest.raises(SpoolFull) as full:  # into the reserve's room, then refused once that is used up too
        for i in range(10_000):
            spool.commit(frames(20, start=i * 20), [])
            stored += 20
    assert not full.value.cap_reached and spool.room() == "disk"
    assert spool.depth == stored == len(spool.take(0, 10**6))


def test_a_disk_that_stays_full_still_drains_in_steps(small_tmpfs):
    """No reserve left and 128 KiB free: deleting every acknowledged frame in one transaction needs megabytes of
    WAL, so the commit deletes them a few pages at a time instead."""
    path = small_tmpfs / "spool.sqlite"
    spool = Spool(path)
    for i in range(60):
        spool.commit(frames(1000, start=i * 1000), [])
    assert spool.used_bytes() > 2 << 20
    spool.close()
    spool = Spool(path)
    spool.reserve_path.unlink()
    filler = fill_disk(small_tmpfs)
    os.truncate(filler, filler.stat().st_size - (128 << 10))
    taken = spool.take(0, 10**6)
    everything = [(taken[0].id, taken[-1].id)]
    with pytest.raises(SpoolFull):
        spool._store.commit([], everything, None)  # the one big transaction does not fit
    spool.commit([], everything)
    assert spool.depth == 0 and spool.take(0, 10) == []
    with pytest.raises(SpoolFull):  # new frames still wait for room; acknowledged ones still go
        spool.commit(frames(5000, start=10**6), [])
    spool.close()
    assert Spool(path).depth == 0


def test_a_restart_on_a_disk_that_stayed_full_still_drains(small_tmpfs):
    """The disk filled while Cassandra was away and stays full across a restart: new frames are refused (they wait
    in the port), but the reserve's last part, never given to new frames, lets acknowledged frames leave."""
    path = small_tmpfs / "spool.sqlite"
    spool = Spool(path)
    spool.commit(frames(600), [])
    fill_disk(small_tmpfs)
    start = 600
    with pytest.raises(SpoolFull):
        for start in range(600, 10**6, 5):  # into the reserve's first part, until the disk refuses
            spool.commit(frames(5, start=start), [])
            fill_disk(small_tmpfs)  # whatever the spool gives back (its WAL) is taken at once
    spool.close()
    fill_disk(small_tmpfs)

    spool = Spool(path)
    fill_disk(small_tmpfs)  # what opening took from the reserve and did not use
    with pytest.raises(SpoolFull):
        spool.commit(frames(161, start=10**6), [])
    taken = spool.take(0, 10**6)
    assert len(taken) == spool.depth > 600
    with pytest.raises(SpoolFull):  # the new frames still wait; the acknowledged ones leave
        spool.commit(frames(161, start=10**6), [(taken[0].id, taken[-1].id)])
    assert spool.depth == 0
    spool.close()


@pytest.mark.parametrize("frames_in_file, free, kept, resumes", [
    (5, RESERVE_BYTES + (1 << 20) - 1, 0, False),  # the margin, while the file holds frames
    (5, RESERVE_BYTES + (1 << 20), 0, True),
    (0, RESERVE_BYTES - 1, 0, False),  # drained: the margin is waived, the reserve is not
    (0, RESERVE_BYTES, 0, True),
    (0, RESERVE_BYTES - DRAIN_RESERVE_BYTES, DRAIN_RESERVE_BYTES, True),  # only what the reserve lacks
    (5, RESERVE_BYTES - DRAIN_RESERVE_BYTES + (1 << 20) - 1, DRAIN_RESERVE_BYTES, False),
])
def test_when_the_reserve_lets_reading_resume(tmp_path, monkeypatch, frames_in_file, free, kept, resumes):
    """spool.md, Full disk: room for what the reserve lacks and a margin, the margin waived once the file holds no
    frame (a drained spool on a small disk). The disk's free space is given here; the file is really made."""
    spool = Spool(tmp_path / "s.sqlite")
    spool.reserve_path.unlink()
    if kept:
        with open(spool.reserve_path, "wb") as f:
            f.truncate(kept)
    spool._store.depth = frames_in_file
    monkeypatch.setattr(room_module, "disk_free", lambda _path: free)
    assert spool._room.keep_reserve() is resumes
    spool.close()
