"""`check` on the spool file (gateway/contract/process.md, "check"), on real files: a sound spool, one with bits
flipped inside values on the disk (SQLite's quick check passes, the rows' checksums fail), one of a newer format,
one older than checksums. The file is never changed; what check counts is what a send read leaves out."""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path

from telemetry_gateway.check_command import spool_findings, spool_integrity
from telemetry_gateway.spool import NewFrame, Spool
from telemetry_gateway.spool.audit import audit
from telemetry_gateway.spool.schema import FORMAT_VERSION

from test_spool_row_check import format_5


def frame(n: int) -> NewFrame:
    return NewFrame.of("A-1", 1000 * n, 1000 * n + 1, (("n", 1000.25 + n), ("neg", -float(n))))


def written(path: Path, count: int) -> None:
    spool = Spool(path)
    spool.commit([frame(n) for n in range(1, count + 1)], [])
    spool.close()


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def flip_value_bits(path: Path, numbers: list[int]) -> None:
    """One bit flipped in the file, inside the first value of each of these frames (its bytes occur once)."""
    data = bytearray(path.read_bytes())
    for n in numbers:
        value = struct.pack(">d", 1000.25 + n)
        assert data.count(value) == 1
        data[data.index(value) + 7] ^= 0x10
    path.write_bytes(bytes(data))


def test_a_sound_spool_is_ok_with_its_frame_count(tmp_path, capsys):
    path = tmp_path / "spool.sqlite"
    written(path, 40)
    before = files(tmp_path)
    assert spool_integrity(path) is None
    assert capsys.readouterr().out == f"spool    {path}: ok, 40 frames\n"
    assert files(tmp_path) == before


def test_bits_flipped_in_values_fail_their_checksums_and_check_counts_them(tmp_path, capsys):
    path = tmp_path / "spool.sqlite"
    written(path, 5000)  # rows on many pages: the reads go in batches
    flip_value_bits(path, [3, 1777, 4999])
    before = files(tmp_path)
    sqlite = sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)  # leaves no -wal, -shm
    assert sqlite.execute("PRAGMA quick_check").fetchall() == [("ok",)]  # SQLite sees nothing
    sqlite.close()
    problem = spool_integrity(path)
    assert capsys.readouterr().out == f"spool    {path}: CHECKSUM FAILING in 3 of 5000 frames\n"
    assert problem == (f"spool {path} holds 3 frame(s) whose checksum fails: they are never sent; the gateway "
                       "deletes them as it reaches them and counts them in "
                       "telemetry_gateway_spool_invalid_frames_total")
    assert files(tmp_path) == before  # read-only
    spool = Spool(path)  # a send read leaves out the same rows
    taken = spool.take(0, 10_000)
    assert len(taken) == 4997 and [row[2] for row in spool.damaged_rows()] == [3000, 1_777_000, 4_999_000]
    spool.close()


def test_a_newer_format_is_reported_and_left_as_it_is(tmp_path, capsys):
    path = tmp_path / "spool.sqlite"
    written(path, 3)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {FORMAT_VERSION + 1}")
    db.close()
    before = files(tmp_path)
    problem = spool_integrity(path)
    newer = FORMAT_VERSION + 1
    line = f"spool    {path}: NEWER FORMAT {newer} (this gateway reads up to {FORMAT_VERSION})\n"
    assert capsys.readouterr().out == line
    assert problem == (f"spool {path} is of format {newer}, newer than this gateway reads ({FORMAT_VERSION}): run the "
                       "newer gateway, or move the file aside")
    assert files(tmp_path) == before


def test_a_spool_older_than_checksums_is_counted_unchecked(tmp_path):
    path = tmp_path / "spool.sqlite"
    format_5(path)
    found = audit(path)
    assert (found.integrity.ok, found.version, found.newer, found.frames, found.failing) == (True, 5, False, 1, 0)
    assert spool_findings(path, found) == ("ok, 1 frames", None)


def test_a_damaged_spool_is_still_damaged_first(tmp_path):
    path = tmp_path / "spool.sqlite"
    written(path, 2000)
    data = bytearray(path.read_bytes())
    data[4096 * 3:4096 * 4] = bytes(4096)  # a zeroed page
    path.write_bytes(bytes(data))
    line, problem = spool_findings(path, audit(path))
    assert line == "DAMAGED" and problem.startswith(f"spool {path} is damaged (")
