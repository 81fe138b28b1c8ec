"""A full disk recovers, whatever its size (gateway/contract/spool.md, "Full disk", "A clean stop"), every gateway
under test side by side, on real small tmpfs disks (ENOSPC from the kernel), with the real local Cassandra:

- a disk the spool filled itself while Cassandra was unreachable, at 2, 4 and 8 MiB: reading pauses, SIGTERM
  loses nothing and leaves no WAL taken for a crash, a restart on the still-full disk drains the spool, gives the
  file's room back and resumes reading within seconds of the drain;
- the default policy holding frames in memory (Cassandra up but slow) when the disk fills, a stop while it is full,
  a restart on it, then room again.

Allowed loss: none (frames wait in the pty meanwhile), but for the one line a stop may cut in two: reading paused,
the process took a part of the line from the port, and the next one finds the rest (line_rejected, a seq gap). Every
frame is checked row by row (values, timestamps, once).
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest

from conftest import fill_disk
from telemetry_conformance import (Board, GatewayUnderTest, PacedWriter, Stream, gateways_under_test, stored_numbers,
                                   wait_for)
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)
from telemetry_conformance.slow_proxy import SlowProxy
from test_faults import check_rows

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True

HOUR_MS = 3_600_000
RESUME_S = 5.0  # "within seconds": from the drained spool to reading again
SIZES_MIB = (2, 4, 8)
WAITED_MS = 900_000  # a frame waits in the pty while reading is paused: stamped when read, minutes late
RATE = 2000  # frames/s per board: the spools fill their disks in seconds
CHUNK = 40


class BulkyWriter(PacedWriter):
    """Frames that fill a spool quickly for the rows they make in Cassandra (a long source name is in every spool
    row and no Cassandra row; a long metric name is one row), written CHUNK frames at a time so that a few
    writers at thousands of frames/s do not starve the test's own Cassandra driver. The frames of a chunk share
    their times: started when its first byte went, sent when its last did."""

    def run(self) -> None:
        n, start = 0, time.monotonic()
        try:
            while not self.stop_event.is_set():
                chunk = [self.frame(n + k) for k in range(1, CHUNK + 1)]
                started = time.monotonic()
                self.started.update((n + k, started) for k in range(1, CHUNK + 1))
                self.board.write(b"".join(chunk), timeout=300)
                done, wall_ms = time.monotonic(), int(time.time() * 1000)
                self.sent += [(n + k, done, wall_ms) for k in range(1, CHUNK + 1)]
                n += CHUNK
                time.sleep(max(0.0, start + n / self.rate - time.monotonic()))
        except BaseException as error:  # reported by finish()
            self.error = error

    def frame(self, n: int) -> bytes:
        return self.stream.frame(n, t=self.t_base_ms + n if n % 2 == 0 else None, soil_moisture_ab=n / 10)

    def expected_values(self, n: int) -> dict[str, float]:
        return {"n": float(n), "soil_moisture_ab": n / 10}


def mount_tmpfs(folder: Path, mib: int) -> Path:
    folder.mkdir(parents=True)
    assert os.system(f"mount -t tmpfs -o size={mib}m,mode=0700 tmpfs {folder}") == 0
    return folder


@pytest.fixture
def small_disks(tmp_path):
    """A real tmpfs per (gateway, size), unmounted afterwards (root, as the small_tmpfs fixture)."""
    if os.geteuid() != 0:
        pytest.skip("mounting tmpfs disks for the full-disk tests needs root")
    mounted: list[Path] = []

    def mount(name: str, mib: int) -> Path:
        mounted.append(mount_tmpfs(tmp_path / "disks" / name, mib))
        return mounted[-1]
    yield mount
    for folder in mounted:
        os.system(f"umount -l {folder}")


@pytest.fixture
def rigs_on_disks(small_disks, tmp_path, keyspace, cassandra_node, gateways, monkeypatch):
    """rigs(sizes) → {"<gateway> <size> MiB": (board, gateway, start)}: every gateway under test once per disk
    size, each with a board and a tmpfs disk of its own for its spool; start(**env) starts it (again)."""
    def rigs(sizes: tuple[int, ...]) -> dict:
        made = {}
        for mib in sizes:
            for name, command in gateways_under_test().items():
                folder = tmp_path / f"{name}-{mib}mib"
                folder.mkdir()
                board = Board(folder / "ttyUSB0")
                spool = small_disks(f"{name}-{mib}mib", mib) / "spool.sqlite"
                gateway = GatewayUnderTest.configure(folder, [board.link], keyspace, cassandra_node, spool=spool)
                gateways.append(gateway)

                def start(gateway=gateway, command=command, **env: str) -> None:
                    monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
                    gateway.start(**env)
                made[f"{name} {mib} MiB"] = (board, gateway, start)
        return made
    return rigs


def writing(writer: PacedWriter) -> bool:
    if writer.error is not None:
        raise writer.error
    return True


def files_left(spool: Path) -> set[str]:
    return {p.name.removeprefix(spool.name) for p in spool.parent.iterdir() if p.name.startswith(spool.name)}


def after_last_start(log: str) -> str:
    return log[log.rfind("event=gateway_started"):]


def test_a_disk_the_spool_filled_itself_recovers_at_every_size(rigs_on_disks, db):
    rigs = rigs_on_disks(SIZES_MIB)
    t_base = int(time.time() * 1000) - HOUR_MS
    writers = {}
    for who, (board, gateway, start) in rigs.items():
        start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens there: every frame stays spooled
        source = f"{len(writers)}-greenhouse-north-bench-soilpro"  # 32 characters, the most a source has
        writers[who] = BulkyWriter(board, Stream(source), rate=RATE, t_base_ms=t_base)
        writers[who].start()
    for who, (board, gateway, start) in rigs.items():
        wait_for(lambda: writing(writers[who]) and gateway.metric("telemetry_gateway_reading_paused") == 1, 120,
                 f"{who}: reading paused")
        assert gateway.metric("telemetry_gateway_spool_full_total", kind="disk") == 1, who
    for writer in writers.values():  # the frames already in the ptys are the test's from here on
        writer.stop_event.set()
    file_sizes, cut_in_two = {}, {}
    for who, (board, gateway, start) in rigs.items():
        file_sizes[who] = gateway.spool_path.stat().st_size
        assert gateway.stop() == 0, who
        cut_in_two[who] = {max(gateway.spooled_numbers()) + 1}  # the frames read are 1..N: N + 1 may be cut
        log = gateway.log()
        assert "shutdown_with_unspooled_frames" not in log and "Traceback" not in log, f"{who}: {log[-2000:]}"
        assert log.rstrip().endswith("lost_frames=0"), f"{who}: {log[-1500:]}"
        # the stop cut the WAL with the reserve's room, or said with the marker that it stopped cleanly
        assert "-wal" not in files_left(gateway.spool_path) or ".clean-stop" in files_left(gateway.spool_path), who

    for who, (board, gateway, start) in rigs.items():
        start()  # Cassandra reachable now; the disk as the spool left it: full
    smallest = {who: file_sizes[who] for who in rigs}
    drained_at: dict[str, float] = {}
    resumed_at: dict[str, float] = {}

    def watch() -> bool:
        for who, (board, gateway, start) in rigs.items():
            smallest[who] = min(smallest[who], gateway.spool_path.stat().st_size)
            if who not in drained_at and gateway.metric("telemetry_gateway_spool_frames") == 0:
                drained_at[who] = time.monotonic()
            if who not in resumed_at and gateway.metric("telemetry_gateway_reading_paused") == 0:
                resumed_at[who] = time.monotonic()
        return len(resumed_at) == len(rigs)
    wait_for(watch, 180, "every gateway reading again", interval=0.05)
    for who, (board, gateway, start) in rigs.items():
        log = after_last_start(gateway.log())
        assert "unclean_stop_detected" not in log and "frames_possibly_lost" not in log, f"{who}: {log[:1500]}"
        assert log.count("event=line_rejected") <= 1, f"{who}: {log[:1500]}"
        waited = resumed_at[who] - drained_at.get(who, resumed_at[who])
        assert waited < RESUME_S, f"{who}: reading resumed {waited:.1f} s after the spool drained"
        assert smallest[who] < file_sizes[who] / 2, \
            f"{who}: the file kept {smallest[who]} of {file_sizes[who]} B; {log[:3000]}"
    time.sleep(1.1)
    for who, writer in writers.items():
        board, gateway, start = rigs[who]
        sent = writer.finish()
        stored = check_rows(db, writer, sent, may_be_missing=cut_in_two[who], who=who, late_ms=WAITED_MS)
        print(f"{who}: sent {len(sent)}, stored {len(stored)}, file {file_sizes[who]} B at the pause, "
              f"smallest {smallest[who]} B after, resumed "
              f"{resumed_at[who] - drained_at.get(who, resumed_at[who]):.2f} s after the drain")
    for who, (board, gateway, start) in rigs.items():
        assert gateway.stop() == 0, who
        assert "Traceback" not in gateway.log() and gateway.log().rstrip().endswith("lost_frames=0"), who


def test_frames_held_in_memory_meet_a_full_disk_and_a_stop_on_it(rigs_on_disks, db, cassandra_node):
    """Cassandra up but slow (every answer 0.3 s late, only for these gateways): at the default policy a few dozen
    frames are held in memory at any time, acknowledged within the hold. Another writer fills the disk meanwhile
    (the commits of receipt-stamp ceilings and seqs are refused), which stays full through a stop and a restart,
    then room comes back. Allowed loss: the one line a stop may cut in two, as above."""
    proxy = SlowProxy(cassandra_node, delay_s=0.3)
    try:
        rigs = rigs_on_disks((8,))
        writers = {}
        t_base = int(time.time() * 1000) - HOUR_MS
        for name, (board, gateway, start) in rigs.items():
            start(TELEMETRY_CASSANDRA_PORT=str(proxy.port))
            gateway.wait_holding()
            writers[name] = PacedWriter(board, Stream(f"H{len(writers)}"), rate=100, t_base_ms=t_base)
            writers[name].start()
        wait_for(lambda: all(g.metric("telemetry_gateway_spool_holding") == 1
                             and g.metric("telemetry_gateway_spool_frames") > 0 for _, g, _ in rigs.values()), 60,
                 "frames held in memory")
        disks = [g.spool_path.parent for _, g, _ in rigs.values()]
        fillers = [fill_disk(disk) for disk in disks]  # another writer takes every free block, once
        # Held frames are acknowledged or fall due meanwhile; the stamp ceilings' and seqs' commits are refused. A
        # gateway whose commits fit in the WAL file it already has (reused, not grown) may not even notice.
        time.sleep(5)
        cut_in_two = {}
        for name, (board, gateway, start) in rigs.items():
            print(f"{name}: reading paused {gateway.metric('telemetry_gateway_reading_paused'):.0f} on the full disk")
            assert gateway.stop() == 0, name  # on the full disk
            log = gateway.log()
            assert "Traceback" not in log and log.rstrip().endswith("lost_frames=0"), f"{name}: {log[-1500:]}"
            read = gateway.spooled_numbers() | set(stored_numbers(db, writers[name].stream.source))
            cut_in_two[name] = {max(read) + 1}  # frames are read in order: 1..max(read) were read
        for name, (board, gateway, start) in rigs.items():
            start(TELEMETRY_CASSANDRA_PORT=str(proxy.port))  # the fillers still there: what the stop freed only
        # drained on the full disk, and reading again in the room that gave (on a disk that stays this full, it
        # may pause again: the margin is waived for a drained spool)
        wait_for(lambda: all("spool_room_again kind=disk spooled_frames=0 " in after_last_start(g.log())
                             or g.metric("telemetry_gateway_spool_full_total", kind="disk") == 0
                             for _, g, _ in rigs.values()), 60, "the spools drained on the full disk")
        for name, (board, gateway, start) in rigs.items():
            log = after_last_start(gateway.log())
            assert "unclean_stop_detected" not in log and "frames_possibly_lost" not in log, f"{name}: {log[:1500]}"
        for filler in fillers:
            filler.unlink()
        wait_for(lambda: all(g.metric("telemetry_gateway_reading_paused") == 0 for _, g, _ in rigs.values()),
                 RESUME_S, "reading again once the disk has room")
        time.sleep(2)
        for name, writer in writers.items():
            sent = writer.finish()
            stored = check_rows(db, writer, sent, may_be_missing=cut_in_two[name], who=name, late_ms=WAITED_MS)
            print(f"{name}: sent {len(sent)}, stored {len(stored)} (held frames, full disk, stop on it)")
        for name, (board, gateway, start) in rigs.items():
            assert gateway.stop() == 0, name
            assert "Traceback" not in gateway.log(), name
    finally:
        proxy.close()
