"""A damaged spool file (gateway/contract/spool.md, "A damaged spool"): found by the check, read past its damaged
pages, rows checked, replaced by a new spool, the damaged file kept aside as it was."""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path

from telemetry_gateway.spool import Spool
from telemetry_gateway.spool.recovery import aside_path, recover_if_damaged
from telemetry_gateway.spool.salvage import check, header, salvage
from telemetry_gateway.spool.schema import STATEMENTS

PAGE = 4096
FRAMES = 600


def write_spool(path: Path, frames: int = FRAMES, extra_rows: list[tuple] = ()) -> None:
    """A sound spool: per-source rows first, then frames (n: ts 1000 n, values n and -n), so its last pages are
    leaves of the frames table."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN IMMEDIATE")
    for statement in STATEMENTS:
        db.execute(statement)
    db.execute("INSERT INTO receipt_stamps VALUES ('A-1', 5000)")
    db.execute("INSERT INTO source_seqs VALUES ('A-1', 41, 5000)")
    db.execute("INSERT INTO source_counters (source, counter) VALUES ('SIG-1', 77)")
    db.executemany("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals) VALUES (?, ?, ?, ?, ?)",
                   [("A-1", 1000 * n, 1000 * n, "n,neg", struct.pack(">2d", n, -n)) for n in range(1, frames + 1)]
                   + list(extra_rows))
    db.execute("COMMIT")
    db.close()  # a clean close folds the WAL in


def frames_of(spool: Spool) -> dict[int, tuple]:
    return {int(dict(frame.values)["n"]): (frame.source, frame.ts_ms, frame.values) for frame in spool.take(0, 10**6)}


def expected(n: int) -> tuple:
    return ("A-1", 1000 * n, (("n", float(n)), ("neg", float(-n))))


def test_a_sound_spool_is_left_alone(tmp_path):
    path = tmp_path / "spool.db"
    write_spool(path)
    before = path.read_bytes()
    assert check(path) == (True, "ok")
    assert recover_if_damaged(path) is None
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()  # a WAL left behind would read as a crash at the next start
    assert check(tmp_path / "missing.db").ok


def test_a_zeroed_page_loses_only_its_own_frames(tmp_path):
    path = tmp_path / "spool.db"
    write_spool(path)
    data = bytearray(path.read_bytes())
    pages = len(data) // PAGE
    data[(pages - 3) * PAGE:(pages - 2) * PAGE] = bytes(PAGE)  # a leaf of frames, near the end
    path.write_bytes(bytes(data))
    integrity = check(path)
    assert not integrity.ok and integrity.detail
    assert path.read_bytes() == bytes(data)  # the check changes nothing

    spool = Spool(path, "batch")
    try:
        recovered = spool.recovered
        found = frames_of(spool)
        assert spool.last_counters() == {"SIG-1": 77}
        assert spool.last_source_seqs() == {"A-1": (41, 5000)}
    finally:
        spool.close()
    lost = sorted(set(range(1, FRAMES + 1)) - found.keys())
    assert 0 < len(lost) < 100 and lost == list(range(lost[0], lost[-1] + 1)), lost  # one page's run of frames
    assert all(found[n] == expected(n) for n in found)
    assert recovered.frames == len(found) and recovered.frames_invalid == 0
    assert recovered.frames_skipped_ids >= len(lost) and recovered.counters_complete
    assert recovered.aside.read_bytes() == bytes(data)
    assert recovered.aside.name.startswith("spool.db.damaged-")
    assert check(path).ok


def test_a_garbage_header_is_read_through_a_new_header(tmp_path):
    path = tmp_path / "spool.db"
    write_spool(path)
    data = bytearray(path.read_bytes())
    data[:100] = bytes(range(100, 200))
    path.write_bytes(bytes(data))
    assert not check(path).ok
    found = salvage(path)
    assert not found.unreadable and len(found.tables["frames"].rows) == FRAMES
    assert not (tmp_path / "spool.db.salvage").exists()


def test_the_header_written_is_sqlites_own_for_the_fields_it_sets(tmp_path):
    path = tmp_path / "spool.db"
    write_spool(path, frames=10)
    real = path.read_bytes()[:100]
    made = header(PAGE, len(path.read_bytes()) // PAGE)
    for start, end in ((0, 24), (28, 32), (44, 48), (56, 60)):  # magic, page size, versions, fractions, size, format
        assert made[start:end] == real[start:end], (start, end)


def test_rows_that_cannot_be_intact_are_not_kept(tmp_path):
    path = tmp_path / "spool.db"
    bad = [("A-1", 1, 1, "n,neg", b"\0" * 8),  # one value for two names
           ("A-1", 1, 1, "N", b"\0" * 8),  # not a metric name
           (b"\xff\xfe", 1, 1, "n", b"\0" * 8),  # a source that is not UTF-8 text
           ("A-1", -5, 1, "n", b"\0" * 8),  # a negative time
           ("A-1", 1, 1, "n", "12345678")]  # values as text
    write_spool(path, frames=3, extra_rows=bad)
    frames = salvage(path).tables["frames"]
    assert [row[1:4] for row in frames.rows] == [("A-1", 1000 * n, 1000 * n) for n in (1, 2, 3)]
    assert frames.invalid == len(bad)


def test_the_file_aside_is_named_by_the_utc_time(tmp_path):
    assert aside_path(tmp_path / "spool.db", 1_795_811_400.9).name == "spool.db.damaged-20261127T203000Z"


def test_counters_keep_the_key_they_were_accepted_under(tmp_path):
    path = tmp_path / "spool.db"
    write_spool(path, frames=5)
    db = sqlite3.connect(path)
    db.execute("UPDATE source_counters SET key_fingerprint = '0123456789abcdef'")
    db.execute("INSERT INTO source_counters VALUES ('SIG-2', 9, 'not a fingerprint')")
    db.commit()
    db.close()
    counters = salvage(path).tables["source_counters"]
    assert counters.rows == [("SIG-1", 77, "0123456789abcdef")] and counters.invalid == 1


def test_a_format_4_spool_gives_counters_without_a_key(tmp_path):
    path = tmp_path / "spool.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE source_counters (source TEXT PRIMARY KEY, counter INTEGER NOT NULL)")
    db.execute("INSERT INTO source_counters VALUES ('SIG-1', 77)")
    db.commit()
    db.close()
    assert salvage(path).tables["source_counters"].rows == [("SIG-1", 77, "")]


def test_a_start_that_stopped_between_its_renames_is_finished_by_the_next(tmp_path):
    path = tmp_path / "spool.db"
    write_spool(tmp_path / "spool.db.recovering", frames=7)  # built and closed; the damaged file already moved
    spool = Spool(path, "batch")
    try:
        assert spool.recovered is None and sorted(frames_of(spool)) == list(range(1, 8))
    finally:
        spool.close()
    assert not (tmp_path / "spool.db.recovering").exists()
