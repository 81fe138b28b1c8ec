"""A corpus of damaged spool files, made at test time from a real spool (gateway/contract/spool.md, "A damaged
spool"): a spool written by the contract's spool.sql with real frames, then copies of it damaged as an SD card
damages files: a zeroed page, a torn page (its second half zeroed), a garbage header, the file cut to 60 %, 20
flipped bits, 20 bits flipped inside values (one in each of 20 frames: SQLite's checks see nothing, the rows'
checksums fail), and a WAL damaged in the middle of the transactions a crash left in it.

Each damaged file comes with the frames the sound spool held and the frames at risk: those on the damaged pages
(found with SQLite's dbstat table, whose page paths in order are the b-tree's key order) or in the WAL's
transactions from the damaged one on. A gateway may lose only frames at risk.

    python -m telemetry_conformance.damaged_spools FOLDER [SOURCE]   writes the corpus into FOLDER
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .commands import ROOT
from .spool_rows import frame_crc

SPOOL_SQL = ROOT / "gateway" / "contract" / "spool.sql"
KINDS = ("zeroed_page", "torn_page", "garbage_header", "truncated", "bit_flips", "value_bits", "damaged_wal")
FRAMES = 3000
WAL_TRANSACTIONS = 10  # damaged_wal: the last frames committed in this many transactions, left in the WAL
FLIPS = 20
SIGNED_SOURCE, SIGNED_COUNTER = "SIG-1", 77  # a source_counters row, to see counters kept
HEADER_BYTES = 100
WAL_HEADER, WAL_FRAME_HEADER = 32, 24


def values_of(n: int) -> dict[str, float]:
    return {"n": float(n), "temp_in": n / 4 - 20, "light": float(n % 101)}


@dataclass
class DamagedSpool:
    kind: str
    path: Path
    frames: dict[int, tuple[int, dict[str, float]]]  # n: (ts_ms, values), every frame the sound spool held
    at_risk: set[int] = field(default_factory=set)  # frames the damage may take
    failing: set[int] = field(default_factory=set)  # frames whose row fails its checksum, SQLite's checks passing
    detail: str = ""  # what was damaged, for the report

    def damaged_bytes(self) -> bytes:
        return self.path.read_bytes()


def write_spool(path: Path, source: str, t_base_ms: int, count: int = FRAMES, in_wal: int = 0) -> list[list[int]]:
    """A spool of count frames of source (frame n: ts t_base_ms + 10 n, values_of(n)), each row with its checksum, its
    receipt stamp, seq and a signed source's counter. The last in_wal frames are committed in WAL_TRANSACTIONS transactions and left in the
    WAL, as a crash leaves them (the files are copied while the connection is open). Returns, for those
    transactions, the frame numbers of each."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("BEGIN IMMEDIATE")
    for statement in _statements():
        db.execute(statement)
    db.execute("COMMIT")

    def insert(numbers: range) -> None:
        db.execute("BEGIN IMMEDIATE")
        rows = [(source, t_base_ms + 10 * n, t_base_ms + 10 * n, ",".join(values_of(n)),
                 struct.pack(">3d", *values_of(n).values())) for n in numbers]
        db.executemany("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals, crc) VALUES (?, ?, ?, ?, ?, ?)",
                       [(*row, frame_crc(*row)) for row in rows])
        last = numbers[-1]
        db.execute("INSERT OR REPLACE INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?)",
                   (source, t_base_ms + 10 * last))
        db.execute("INSERT OR REPLACE INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, ?)",
                   (source, (last - 1) % 65536, t_base_ms + 10 * last))
        db.execute("INSERT OR REPLACE INTO source_counters (source, counter) VALUES (?, ?)",
                   (SIGNED_SOURCE, SIGNED_COUNTER))
        db.execute("COMMIT")

    insert(range(1, count - in_wal + 1))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    transactions = []
    if in_wal:
        size = in_wal // WAL_TRANSACTIONS
        for first in range(count - in_wal + 1, count + 1, size):
            numbers = range(first, min(first + size, count + 1))
            insert(numbers)
            transactions.append((list(numbers), _wal_frames(path)))
        for suffix in ("", "-wal"):  # a crash: the WAL stays
            shutil.copyfile(f"{path}{suffix}", f"{path}.crashed{suffix}")
    db.close()
    if in_wal:
        for suffix in ("", "-wal"):
            Path(f"{path}.crashed{suffix}").replace(f"{path}{suffix}")
        Path(f"{path}-shm").unlink(missing_ok=True)
    return transactions


def _statements() -> list[str]:
    statements, pending = [], ""
    for line in SPOOL_SQL.read_text().splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return statements


def _wal_frames(path: Path) -> int:
    wal = Path(f"{path}-wal")
    page = 4096
    return (wal.stat().st_size - WAL_HEADER) // (WAL_FRAME_HEADER + page) if wal.exists() else 0


class Pages:
    """The frames table's pages of a sound spool: each leaf's frame numbers (rowid n), and each page's subtree."""

    def __init__(self, path: Path) -> None:
        db = sqlite3.connect(path)
        try:
            self.page_size = db.execute("PRAGMA page_size").fetchone()[0]
            self.page_count = db.execute("PRAGMA page_count").fetchone()[0]
            rows = db.execute("SELECT path, pageno, pagetype, ncell FROM dbstat WHERE name = 'frames' "
                              "ORDER BY path").fetchall()
        finally:
            db.close()
        self.path_of = {pageno: page_path for page_path, pageno, _type, _cells in rows}
        self.leaves: dict[int, set[int]] = {}
        first = 1  # rowids are 1..N in insert order, and the leaves in path order hold them in key order
        for page_path, pageno, page_type, cells in rows:
            if page_type == "leaf":
                self.leaves[pageno] = set(range(first, first + cells))
                first += cells

    def frames_under(self, pageno: int) -> set[int]:
        """Frames on this page or below it; none when the page is not the frames table's."""
        if pageno not in self.path_of:
            return set()
        prefix = self.path_of[pageno]
        return set().union(*(frames for leaf, frames in self.leaves.items() if self.path_of[leaf].startswith(prefix)))

    def middle_leaf(self) -> int:
        leaves = sorted(self.leaves, key=self.path_of.get)
        return leaves[len(leaves) // 2]


def make(kind: str, folder: Path, source: str, t_base_ms: int | None = None, seed: int = 7) -> DamagedSpool:
    """The spool of this kind of damage at folder/spool.sqlite (folder created)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spool.sqlite"
    t_base_ms = int(time.time() * 1000) - 3_600_000 if t_base_ms is None else t_base_ms
    in_wal = FRAMES // 3 if kind == "damaged_wal" else 0
    transactions = write_spool(path, source, t_base_ms, in_wal=in_wal)
    frames = {n: (t_base_ms + 10 * n, values_of(n)) for n in range(1, FRAMES + 1)}
    damaged = DamagedSpool(kind, path, frames)
    rng = random.Random(seed)
    if kind == "damaged_wal":
        _damage_wal(damaged, transactions)
        return damaged
    pages = Pages(path)
    data = bytearray(path.read_bytes())
    size = pages.page_size
    if kind in ("zeroed_page", "torn_page"):
        leaf = pages.middle_leaf()
        start = (leaf - 1) * size + (size // 2 if kind == "torn_page" else 0)
        data[start:leaf * size] = bytes(leaf * size - start)
        damaged.at_risk = set(pages.leaves[leaf])
        damaged.detail = f"page {leaf} of {pages.page_count}"
    elif kind == "garbage_header":
        data[:HEADER_BYTES] = rng.randbytes(HEADER_BYTES)
        damaged.detail = "its first 100 bytes"  # the header is rebuilt from the format: nothing at risk
    elif kind == "truncated":
        keep = int(len(data) * 0.6)
        del data[keep:]
        first_cut = keep // size + 1  # the first page not whole any more
        damaged.at_risk = set().union(*(pages.frames_under(page) for page in range(first_cut, pages.page_count + 1)))
        damaged.detail = f"{keep} of {pages.page_count * size} bytes"
    elif kind == "bit_flips":
        bits = sorted(rng.randrange(len(data) * 8) for _ in range(FLIPS))
        for bit in bits:
            data[bit // 8] ^= 1 << (bit % 8)
        flipped = sorted({bit // 8 // size + 1 for bit in bits})
        damaged.at_risk = set(frames) if 1 in flipped else set().union(*map(pages.frames_under, flipped))
        damaged.detail = f"{FLIPS} bits in pages {flipped}"
    elif kind == "value_bits":
        for n in sorted(rng.sample(sorted(frames), FLIPS)):
            vals = struct.pack(">3d", *values_of(n).values())  # 24 bytes found once in the file: this frame's
            assert data.count(vals) == 1, n
            data[data.index(vals) + 7] ^= 0x01  # the first value's lowest bit
            damaged.failing.add(n)
        damaged.at_risk = set(damaged.failing)
        damaged.detail = f"one bit inside the values of each of {FLIPS} frames"
    path.write_bytes(bytes(data))
    return damaged


def _damage_wal(damaged: DamagedSpool, transactions: list[tuple[list[int], int]]) -> None:
    """Garbage over part of the WAL frame in the middle of the transactions: SQLite stops replaying there."""
    wal = Path(f"{damaged.path}-wal")
    data = bytearray(wal.read_bytes())
    total = transactions[-1][1]
    frame = total // 2
    offset = WAL_HEADER + frame * (WAL_FRAME_HEADER + 4096) + WAL_FRAME_HEADER + 1000
    data[offset:offset + 64] = bytes(range(64))
    wal.write_bytes(bytes(data))
    ended = 0
    for numbers, frames_after in transactions:
        if frames_after > frame:  # this transaction's frames reach the damaged one: it and all after are lost
            damaged.at_risk.update(numbers)
        ended = frames_after
    damaged.detail = f"WAL frame {frame + 1} of {ended}"


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    unknown = [arg for arg in argv if arg.startswith("-")]
    if not argv or unknown or len(argv) > 2:
        print(f"usage: python -m telemetry_conformance.damaged_spools FOLDER [SOURCE]"
              f"{f' (unknown option {unknown[0]})' if unknown else ''}", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    source = argv[1] if len(argv) > 1 else "DMG-1"
    for kind in KINDS:
        damaged = make(kind, folder / kind, source)
        print(f"{kind}: {damaged.path} ({damaged.detail}), {len(damaged.at_risk)} of {FRAMES} frames at risk")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
