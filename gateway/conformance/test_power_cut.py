"""Gateway conformance under power cuts, per durability policy: every gateway under test side by side, each
spool on the power-cut file system (telemetry_conformance.power_cut: writes not fsynced are forgotten at a cut) over
a tmpfs of its own, each gateway fed 500 frames/s and a signing node, Cassandra behind a proxy. A cut kills every
gateway (SIGKILL), then cuts the file system, then mounts it again and restarts every gateway on the same spool.
One cut per state of Cassandra, in turn, at random moments: healthy (right after a signed frame landed), hung,
down (right after a signed frame's counter reached the spool), down with the disk full (reading paused), and
during the drain after that outage (which ends while the power is off).

Allowed loss per cut, on each gateway's own clock (test_faults.lost_on_gateway_clock), by policy and state
(guarantees.md, power cut rows): WINDOW_MS. Checked row by row (test_faults.check_rows: every value and timestamp,
each frame at most once); every restart reopens its spool; the frames lost at a cut that left the source's seq
stored are counted as frames_possibly_lost (at least as many); a signed frame that reached Cassandra, or whose
counter reached the spool, before a cut is a replay after it, at every policy. The test prints each cut's loss:
frames, and how long before the cut the oldest of them was read."""

from __future__ import annotations

import os
import random
import re
import sqlite3
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from conftest import fill_disk
from telemetry_conformance import Board, GatewayUnderTest, PacedWriter, Stream, gateways_under_test, wait_for
from telemetry_conformance.cassandra_proxy import CutProxy
from telemetry_conformance.local_node import migrate
from telemetry_conformance.power_cut import PowerCutMount
from telemetry_conformance.scenario_fixtures import db, gateways  # noqa: F401 (fixtures)
from test_faults import HOUR_MS, Kill, check_rows, lost_on_gateway_clock, sigkill
from test_signed_frames import KEY, rejects, signed_frame, temps
from test_stop_and_crash_loss import LOSS_WINDOW_MS

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test through the same cuts, a test per policy

RATE = 500
LEAD_MS = 60_000  # spool.md, "Receipt stamps as ceilings": the lead
INTERVAL_MS = 1000  # fsync_interval_ms, the default
STATES = ("healthy", "hung", "down", "full", "drain")
# What a cut may take, read on the gateway's clock before it (guarantees.md). deferred: held frames (the hold) while
# holding is safe (Cassandra healthy; hung: held until due, then committed), else what batch loses (half the hold
# checks that nothing is held); batch: the commit in progress and the next; interval: the interval's commits not
# yet checkpointed: the interval, the checkpoint's own time, and its timer's lateness on a busy machine.
WINDOW_MS = {
    "deferred": {"healthy": INTERVAL_MS, "hung": INTERVAL_MS, "down": LOSS_WINDOW_MS, "full": LOSS_WINDOW_MS,
                 "drain": LOSS_WINDOW_MS},
    "batch": dict.fromkeys(STATES, 200),
    "interval": dict.fromkeys(STATES, INTERVAL_MS + 500),
}
# Seconds from a cut to the next. After a crash the deferred policy's receipt stamps may run up to a minute late
# (spool.md, ceilings): its later cuts are judged on late stamps, which make frames look read later, never earlier
# (the bound is looser than the truth, never stricter); its first cut is judged exactly.
SPACING_S = (2.5, 4.0)


@dataclass
class Rig:
    name: str
    policy: str
    command: list[str]
    gateway: GatewayUnderTest
    writer: PacedWriter
    signer: Board
    node: int
    kills: list[tuple[Kill, int]] = field(default_factory=list)  # (the kill, its window ms)
    signed: list[float] = field(default_factory=list)  # temp_in of each signed frame that landed
    seq_rows: list[int | None] = field(default_factory=list)  # the stream's stored seq after each cut, if any

    def loss_per_cut(self, stored, lost: set[int]) -> list[tuple[int, int]]:
        """Per cut: the frames it took (those lost that had reached the pty before it and after the cut before),
        and how long before it the oldest of them was read, on the gateway's clock (the stamp of the last frame
        before them that was kept; 0 when none was lost)."""
        stamped = sorted((n, entries[0][0]) for n, entries in stored.items() if n % 2 == 1)
        result, previous_at = [], 0.0
        for kill, _ in self.kills:
            ms, at = kill.ms, kill.dead_at
            taken = {n for n in lost if previous_at < self.writer.started.get(n, 0) <= at}
            before = [ts for n, ts in stamped if taken and n < min(taken)]
            result.append((len(taken), ms - before[-1] if taken and before else 0))
            previous_at = at
        return result

    def may_be_missing(self, frames) -> set[int]:
        return set().union(*(lost_on_gateway_clock(frames, self.writer, [kill], window)
                             for kill, window in self.kills))


@pytest.fixture(scope="module")
def keyspace(cql):
    """One keyspace for the three policies' tests (each gateway's sources are its own): a schema change each costs
    seconds on a busy node."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    assert migrate("--keyspace", name).returncode == 0
    yield name
    cql.execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=60)


@pytest.fixture
def disk(tmp_path):
    """A 32 MiB tmpfs under the power-cut file system: a really full disk for the full-disk state."""
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m,mode=0700", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def start_all(rigs: list[Rig], proxy: CutProxy) -> None:
    """Every gateway started at once (each reopening its spool), each waited for until its ports are open."""
    with ThreadPoolExecutor(len(rigs)) as pool:
        list(pool.map(lambda rig: rig.gateway.start(rig.command, TELEMETRY_CASSANDRA_PORT=str(proxy.port)), rigs))


def power_cut(rigs: list[Rig], fs: PowerCutMount, proxy: CutProxy, state: str, before_restart=None) -> None:
    for rig in rigs:
        rig.kills.append((sigkill(rig.gateway), WINDOW_MS[rig.policy][state]))
    fs.cut()
    if before_restart:
        before_restart()
    for rig in rigs:
        rig.seq_rows.append(spool_value(rig, "SELECT seq FROM source_seqs WHERE source = ?", rig.writer.stream.source))
    start_all(rigs, proxy)


def spool_value(rig: Rig, query: str, *args) -> int | None:
    """A value from the spool file as it is (while the gateway runs: its unsynced writes too)."""
    spool = sqlite3.connect(f"file:{rig.gateway.spool_path}?mode=ro", uri=True)
    try:
        row = spool.execute(query, args).fetchone()
        return row and row[0]
    finally:
        spool.close()


def stored_counter(rig: Rig) -> int | None:
    """The signing node's counter as the spool file holds it."""
    return spool_value(rig, "SELECT counter FROM source_counters WHERE source = ?", f"node{rig.node}")


def replayed_after_cut(rigs: list[Rig], number: int, counter: int, seq: int) -> None:
    """The signed frame accepted before the cut, sent again after it: a replay at every policy, stored once."""
    for rig in rigs:
        rig.signed.append(float(number))
        rig.signer.write(signed_frame(rig.node, number, counter, seq))
    for rig in rigs:
        wait_for(lambda: rejects(rig.gateway)["replay"] == 1, 20, f"{rig.name}: the replay after the cut refused")


def possibly_lost(rig: Rig) -> int:
    """What the gateway's runs counted as possibly lost for the stream's source (each run logs its own)."""
    source = rig.writer.stream.source
    return sum(int(m) for m in re.findall(rf"event=frames_possibly_lost source={source} missing=(\d+)",
                                          rig.gateway.log()))


@pytest.mark.parametrize("policy", list(WINDOW_MS))
def test_power_cuts_lose_at_most_the_bound(policy, tmp_path, disk, keyspace, cassandra_node, db, gateways):
    proxy = CutProxy(cassandra_node)
    fs = PowerCutMount(disk / "backing", tmp_path / "mnt").start()
    try:
        run_cuts(policy, tmp_path, disk, keyspace, cassandra_node, db, gateways, proxy, fs)
    finally:
        for gateway in gateways:
            if gateway.process is not None and gateway.process.poll() is None:
                gateway.kill()
        fs.stop()
        proxy.close()


def run_cuts(policy, tmp_path, disk, keyspace, cassandra_node, db, gateways, proxy, fs) -> None:
    keys = tmp_path / "keys"
    rigs: list[Rig] = []
    t_base_ms = int(time.time() * 1000) - HOUR_MS
    for name, command in gateways_under_test().items():
        label, node = f"{name}-{policy}", 100 * list(WINDOW_MS).index(policy) + 10 * len(rigs) + 3  # one keyspace
        folder = tmp_path / label
        folder.mkdir()
        (fs.mountpoint / label).mkdir()
        board, signer, stream = Board(folder / "ttyUSB0"), Board(folder / "ttyUSB1"), Stream(f"P-{label}")
        gateway = GatewayUnderTest.configure(
            folder, [board.link, signer.link], keyspace, cassandra_node,
            fsync=None if policy == "deferred" else policy, spool=fs.mountpoint / label / "spool.sqlite",
            extra=f'\n[signing]\nkeys_file = "{keys}"\nunsigned_allowed = ["{stream.source}"]\n')
        gateways.append(gateway)
        writer = PacedWriter(board, stream, rate=RATE, t_base_ms=t_base_ms, catch_up=False)
        rigs.append(Rig(label, policy, command, gateway, writer, signer, node))
    keys.write_text("".join(f"node{rig.node} {KEY.hex()}\n" for rig in rigs))
    os.chmod(keys, 0o600)
    start_all(rigs, proxy)
    for rig in rigs:
        if rig.policy == "deferred":
            rig.gateway.wait_holding()
        rig.writer.start()
    rng = random.Random()
    last_cut = time.monotonic()

    def next_cut() -> float:
        """A random moment SPACING_S after the last cut."""
        return last_cut + rng.uniform(*SPACING_S)

    def until(moment: float) -> None:
        time.sleep(max(0.0, moment - time.monotonic()))

    began = time.monotonic()

    def cut(state: str, before_restart=None) -> None:
        nonlocal last_cut
        last_cut = time.monotonic()
        power_cut(rigs, fs, proxy, state, before_restart)
        print(f"{state} cut at {last_cut - began:.1f} s, restarted after {time.monotonic() - last_cut:.1f} s")

    # Healthy: a signed frame per gateway, the cut as soon as every one is in Cassandra; its replay is refused.
    until(next_cut())
    for rig in rigs:
        rig.signer.write(signed_frame(rig.node, 1, 101, 1))
    wait_for(lambda: all(1.0 in temps(db, f"node{rig.node}") for rig in rigs), 20,
             "every signed frame in Cassandra", interval=0.01)
    cut("healthy")
    replayed_after_cut(rigs, 1, 101, 1)

    # Hung: Cassandra answers nothing for a while before the cut.
    moment = next_cut()
    hung_s = rng.uniform(1.5, 3.0)  # more than the hold: deferred commits what Cassandra does not answer for
    until(moment - hung_s)
    proxy.hang()
    until(max(moment, time.monotonic() + hung_s))
    cut("hung")

    # Down: unreachable. A signed frame, the cut as soon as its counter is in the spool; its replay is refused.
    proxy.cut()
    until(next_cut())
    for rig in rigs:
        rig.signer.write(signed_frame(rig.node, 2, 102, 2))
    for rig in rigs:
        wait_for(lambda: stored_counter(rig) == 102, 20, f"{rig.name}: the counter in the spool", interval=0.01)
    cut("down")
    replayed_after_cut(rigs, 2, 102, 2)

    # Still down, and the spools' disk really full: reading pauses; the cut comes during the pause.
    filler = fill_disk(disk)
    for rig in rigs:
        wait_for(lambda: fill_disk(disk) and rig.gateway.metric("telemetry_gateway_reading_paused") == 1, 60,
                 f"{rig.name}: reading paused on the full disk")
    until(next_cut())

    def outage_over() -> None:  # while the power is off: room again, Cassandra back
        filler.unlink()
        proxy.restore()
    cut("full", outage_over)

    # The cut comes while the spools drain.
    for rig in rigs:
        wait_for(lambda: rig.gateway.metric("telemetry_gateway_frames_written_total") > 0, 60,
                 f"{rig.name}: the drain started", interval=0.05)
    draining = [rig.name for rig in rigs if rig.gateway.metric("telemetry_gateway_spool_frames") > 0]
    cut("drain")

    time.sleep(1.0)
    sent = {rig.name: rig.writer.finish() for rig in rigs}
    print(f"writers stopped at {time.monotonic() - began:.1f} s")
    summary = []
    for rig in rigs:
        # Every policy: a frame may wait in the pty up to a minute (a restart, reading paused on a full disk) before
        # it is stamped when read; deferred: its stamp may then be up to the lead late, however many cuts came
        # before (spool.md, ceilings).
        late_ms = 60_000 + (LEAD_MS if policy == "deferred" else 0)
        stored = check_rows(db, rig.writer, sent[rig.name], rig.may_be_missing, who=rig.name, late_ms=late_ms)
        sent_ms = {n: wall_ms for n, _, wall_ms in sent[rig.name]}
        late = max(stored[n][0][0] - sent_ms[n] for n in stored if n % 2 == 1)
        lost = {n for n, _, _ in sent[rig.name]} - stored.keys()
        per_cut = rig.loss_per_cut(stored, lost)
        summary.append(f"{rig.name}: sent {len(sent[rig.name])}, lost {len(lost)}, stamps late by at most {late} ms, "
                       f"counted as possibly lost "
                       f"{possibly_lost(rig)}; per cut (frames, ms read before it on the gateway's clock, seq "
                       f"stored): " + ", ".join(f"{state} {n} {span} {row is not None}" for state, (n, span), row
                                                in zip(STATES, per_cut, rig.seq_rows)))
        # Gaps are judged against the source's stored seq: a cut that left none counts nothing (guarantees.md).
        # deferred writes a new source's row once its first frames are safe (spool.md): every cut here leaves one.
        countable = sum(n for (n, _), row in zip(per_cut, rig.seq_rows) if row is not None)
        if policy == "deferred":
            assert None not in rig.seq_rows, f"{rig.name}: a cut left no stored seq: {rig.seq_rows}"
        assert possibly_lost(rig) >= countable, f"{rig.name}: {countable} lost after a stored seq, fewer counted"
        wait_for(lambda: temps(db, f"node{rig.node}") == rig.signed, 30, f"{rig.name}: the signed frames, each once")
        log = rig.gateway.log()
        assert log.count("event=unclean_stop_detected") == len(STATES), rig.name
        assert "Traceback" not in log, rig.name
    print("\n".join(summary))
    print(f"draining at the last cut: {draining}; rows checked at {time.monotonic() - began:.1f} s")
    for rig in rigs:
        assert rig.gateway.stop() == 0, rig.name
