"""Gateway conformance: the gateway SIGKILLed at random moments of a steady stream and restarted, under each
durability policy. Every check is row by row (test_faults.check_rows). The gateways under test run side by side,
each with a board, spool and source of its own, killed and restarted at the same random moments."""

from __future__ import annotations

import random
import threading
import time

import pytest

from telemetry_conformance import PacedWriter, Stream
from telemetry_conformance.metrics import scrape_metrics
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace, side_by_side  # noqa: F401 (fixtures)
from test_faults import HOUR_MS, check_rows, lost_on_gateway_clock, sigkill

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test through the same kills, not one run per gateway
LEAD_MS = 60_000  # spool.md, "Receipt stamps as ceilings": the lead of the deferred policy
ACCEPTED = "telemetry_gateway_frames_accepted_total"


class AcceptedCounts(threading.Thread):
    """Polls each gateway's count of accepted frames, per run: runs[name][r] = [(monotonic s once the answer was
    in, count)] for the r-th process. A count c answered by time t says the run had read its first c frames by t."""

    def __init__(self, gateways: dict) -> None:
        super().__init__(daemon=True)
        self.gateways, self.runs, self.done = gateways, {name: [[]] for name in gateways}, threading.Event()

    def restarted(self, name: str) -> None:
        """The old process is dead (killed and waited for): what answers from now on is the next run."""
        self.runs[name].append([])

    def run(self) -> None:
        while not self.done.wait(0.05):
            for name, gateway in self.gateways.items():
                run = self.runs[name][-1]
                try:
                    samples = scrape_metrics(gateway.metrics_port)
                except Exception:  # noqa: BLE001 (a process killed while it answered)
                    samples = None
                if samples is not None:
                    run.append((time.monotonic(), sum(v for (n, _), v in samples.items() if n == ACCEPTED)))


def read_before(counts: list[tuple[float, float]], at: float) -> int:
    """How many frames a run had surely read by the monotonic time at."""
    return int(max((count for answered, count in counts if answered <= at), default=0))


@pytest.mark.parametrize("fsync, interval_ms", [(None, None), ("batch", 200)], ids=["default", "batch"])
def test_sigkill_at_random_moments_loses_at_most_one_fsync_interval(db, side_by_side, fsync, interval_ms):
    """Five SIGKILLs at random moments of a 500 frames/s stream per gateway, each followed by a restart. Allowed
    loss, per gateway, on its own clock (its receipt stamps): frames the dead process read within fsync_interval_ms
    before a kill (default: deferred, 1000 ms: held in memory, not yet acknowledged by Cassandra nor committed;
    batch: read, not yet committed). Everything it read earlier, and everything sent while it was down (it waits in
    the pty), lands exactly once."""
    rigs, t_base_ms = {}, int(time.time() * 1000) - HOUR_MS
    for name, (board, gateway, start) in side_by_side(fsync=fsync, fsync_interval_ms=interval_ms).items():
        start()
        rigs[name] = (gateway, start, PacedWriter(board, Stream(f"K-{name}"), rate=500, t_base_ms=t_base_ms), [])
    for _, _, writer, _ in rigs.values():
        writer.start()
    counts = AcceptedCounts({name: gateway for name, (gateway, _, _, _) in rigs.items()})
    counts.start()
    rng = random.Random()
    # After a crash the deferred policy's receipt stamps may run up to 60 s late (spool.md, ceilings): then they
    # say nothing of when a frame was read. So a kill is also judged on the run's count of accepted frames: frames
    # are read in order, so c accepted by a moment means the run had read its first c frames by then, and a run's
    # first frame comes after every frame its predecessor read (by induction from the first run, whose first frame
    # is the stream's first).
    spacing = (0.5, 2.5) if fsync == "batch" else (6.5, 8.0)
    for _ in range(5):
        time.sleep(rng.uniform(*spacing))
        for name, (gateway, _, _, kills) in rigs.items():
            kills.append(sigkill(gateway))  # each gateway's own moment
            counts.restarted(name)
        for _, start, _, _ in rigs.values():
            start()
    time.sleep(1.0)
    counts.done.set()
    counts.join()
    sent = {name: writer.finish() for name, (_, _, writer, _) in rigs.items()}
    window_ms = interval_ms or 1000
    for name, (gateway, _, writer, kills) in rigs.items():
        def may_be_missing(frames, writer=writer, kills=kills, runs=counts.runs[name]):
            stamped = [(n, entries[0][0]) for n, entries in frames.items() if n % 2 == 1]
            allowed, first = set(), min(writer.started)  # first: at most the run's first frame
            for kill, run in zip(kills, runs):
                by_stamp = max((n for n, ts in stamped if ts <= kill.ms - window_ms), default=0)
                read = max(by_stamp, first + read_before(run, kill.at - window_ms / 1000) - 1)  # read before it
                allowed |= {n for n in lost_on_gateway_clock(frames, writer, [kill], window_ms) if n > read}
                first = max(first + read_before(run, kill.at), read + 1)  # the next run reads on from there
            return allowed
        # Frames may wait in the pty through a restart before they are read; deferred stamps may then be up to
        # the lead late, however many kills came before (spool.md, ceilings).
        late_ms = 60_000 + (LEAD_MS if fsync is None else 0)
        try:
            stored = check_rows(db, writer, sent[name], may_be_missing, who=name, late_ms=late_ms)
        except AssertionError as error:
            moments = [(round(kill.at, 3), round(kill.dead_at, 3)) for kill in kills]
            raise AssertionError(f"{error}; kills (monotonic: signalled, reaped): {moments}") from None
        print(f"{name}: sent {len(sent[name])}, stored {len(stored)}, lost {len(sent[name]) - len(stored)} "
              f"(allowed: {len(may_be_missing(stored))} read within {window_ms} ms before the 5 kills, "
              f"fsync {fsync or 'default'})")
        assert gateway.stop() == 0, name
