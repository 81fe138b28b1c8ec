"""The power-cut file system (powercutfs, telemetry_conformance.power_cut) can fail: what a cut must forget is gone,
what was fsynced is kept, SQLite's WAL commits behave as on a real power cut, a full disk fails at write()."""

import errno
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from conftest import fill_disk
from telemetry_conformance.power_cut import BINARY, PowerCutMount, ensure_built

EVERY_GATEWAY_INSIDE = True  # no gateway here: the kit's own test runs once


@pytest.fixture
def fs(tmp_path):
    with PowerCutMount(tmp_path / "backing", tmp_path / "mnt") as mount:
        yield mount


def write_file(path, data: bytes, sync: bool, mode: str = "wb") -> None:
    with open(path, mode, buffering=0) as f:
        f.write(data)
        if sync:
            os.fsync(f.fileno())


def test_unsynced_writes_are_forgotten_at_a_cut_and_synced_ones_kept(fs):
    mnt = fs.mountpoint
    write_file(mnt / "synced", b"kept", sync=True)
    write_file(mnt / "unsynced", b"gone", sync=False)
    write_file(mnt / "mixed", b"A" * 10000, sync=True)
    with open(mnt / "mixed", "r+b", buffering=0) as f:  # overwrite the middle, append past the end: not synced
        f.seek(5000)
        f.write(b"B" * 100)
        f.seek(12000)
        f.write(b"C")
    # Before the cut, readers see the file as written: synced bytes merged with the held ones.
    assert (mnt / "unsynced").read_bytes() == b"gone"
    assert (mnt / "mixed").read_bytes() == b"A" * 5000 + b"B" * 100 + b"A" * 4900 + b"\0" * 2000 + b"C"
    assert (fs.backing_dir / "unsynced").read_bytes() == b""  # the backing file holds nothing unsynced

    fs.cut()

    assert (mnt / "synced").read_bytes() == b"kept"
    assert (mnt / "unsynced").read_bytes() == b""  # created (metadata), its data forgotten
    assert (mnt / "mixed").read_bytes() == b"A" * 10000
    assert fs.cuts == 1


def test_held_data_survives_close_and_reopen_until_the_cut(fs):
    """A close is no sync: the data stays readable (as in a page cache) and is still lost at the cut."""
    path = fs.mountpoint / "closed"
    write_file(path, b"first", sync=True)
    write_file(path, b" more", sync=False, mode="ab")
    assert path.read_bytes() == b"first more"
    with open(path, "rb") as f:  # an fsync through another, read-only descriptor writes it back
        os.fsync(f.fileno())
    write_file(path, b" lost", sync=False, mode="ab")
    fs.cut()
    assert path.read_bytes() == b"first more"


def test_metadata_reaches_the_backing_directory_at_once(fs):
    mnt = fs.mountpoint
    (mnt / "dir").mkdir()
    write_file(mnt / "dir" / "a", b"x" * 9000, sync=True)
    os.rename(mnt / "dir" / "a", mnt / "dir" / "b")
    os.truncate(mnt / "dir" / "b", 4000)
    write_file(mnt / "doomed", b"d", sync=True)
    os.unlink(mnt / "doomed")
    fs.cut()
    assert sorted(os.listdir(mnt / "dir")) == ["b"]
    assert (mnt / "dir" / "b").read_bytes() == b"x" * 4000
    assert not (mnt / "doomed").exists()


def test_a_clean_stop_writes_everything_back(tmp_path):
    with PowerCutMount(tmp_path / "backing", tmp_path / "mnt") as fs:
        write_file(fs.mountpoint / "f", b"held until the stop", sync=False)
    assert (tmp_path / "backing" / "f").read_bytes() == b"held until the stop"


WRITER = textwrap.dedent("""
    import sqlite3, sys, time
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    assert db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    db.execute("PRAGMA synchronous=" + sys.argv[2])
    db.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER PRIMARY KEY)")
    for x in range(int(sys.argv[3]), int(sys.argv[4])):
        db.execute("INSERT INTO t VALUES (?)", (x,))
    assert db.execute("SELECT count(*) FROM t").fetchone()[0] == int(sys.argv[4])
    print("committed", flush=True)
    time.sleep(60)
""")


def commit_then_die(path, synchronous: str, first: int, end: int) -> None:
    """Rows first..end-1 committed one transaction each by another process (WAL mode, -shm mapped), which is
    SIGKILLed still holding the database open: a power cut kills every process."""
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), synchronous, str(first), str(end)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "committed\n"
    finally:
        writer.kill()
        writer.wait()


def rows(path) -> list[int]:
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        return [x for (x,) in db.execute("SELECT x FROM t ORDER BY x")]
    finally:
        db.close()


def test_sqlite_wal_commit_at_full_survives_a_cut_and_at_off_does_not(fs):
    full, off = fs.mountpoint / "full.sqlite", fs.mountpoint / "off.sqlite"
    commit_then_die(full, "FULL", 0, 50)
    commit_then_die(off, "FULL", 0, 10)   # a durable start for the OFF database: the cut must forget only the rest
    commit_then_die(off, "OFF", 10, 50)
    # No read in between: the last connection's close checkpoints the WAL into the database, durably.
    fs.cut()

    assert rows(full) == list(range(50))
    assert rows(off) == list(range(10))


def test_a_full_backing_disk_fails_the_write_not_the_fsync(small_tmpfs, tmp_path):
    """The held data takes its room on the backing disk at write(), as a real file system's blocks would."""
    with PowerCutMount(small_tmpfs / "backing", tmp_path / "mnt") as fs:
        with open(fs.mountpoint / "big", "wb", buffering=0) as f:
            with pytest.raises(OSError) as refused:
                while True:
                    f.write(b"\1" * 65536)
            assert refused.value.errno == errno.ENOSPC
            written = f.tell()
            os.fsync(f.fileno())  # what write() accepted has its room: the fsync succeeds
        assert 7 * 2**20 < written <= 8 * 2**20
        assert (fs.backing_dir / "big").stat().st_size == written
        os.unlink(fs.mountpoint / "big")
        fill_disk(fs.mountpoint)  # also through the FS, without fsync: refused once the disk is full
        assert os.statvfs(small_tmpfs).f_bavail == 0


def test_the_command_line(tmp_path):
    ensure_built()
    assert subprocess.run([BINARY, "--help"], capture_output=True).returncode == 0
    unknown = subprocess.run([BINARY, "--bogus", tmp_path, tmp_path], capture_output=True, text=True)
    assert unknown.returncode == 2 and "--bogus" in unknown.stderr
