"""Gateway conformance: the gateway SIGKILLed at random moments of a steady stream and restarted, under each
durability policy. Every check is row by row (test_faults.check_rows). The gateways under test run side by side,
each with a board, spool and source of its own, killed and restarted at the same random moments."""

from __future__ import annotations

import random
import time

import pytest

from telemetry_conformance import PacedWriter, Stream
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace, side_by_side  # noqa: F401 (fixtures)
from test_faults import HOUR_MS, check_rows, lost_on_gateway_clock

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test through the same kills, not one run per gateway
LEAD_MS = 60_000  # spool.md, "Receipt stamps as ceilings": the lead of the deferred policy


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
    rng = random.Random()
    # After a crash the deferred policy's receipt stamps may run up to 60 s late, and crashes in a row add up
    # (spool.md, ceilings; checked below with a minute per kill, more than they add): a kill less than that after a
    # restart is judged on late stamps, which make frames look read later, never earlier (the bound is then looser
    # than the truth, never stricter). The first kill of each gateway is judged exactly.
    spacing = (0.5, 2.5) if fsync == "batch" else (6.5, 8.0)
    for _ in range(5):
        time.sleep(rng.uniform(*spacing))
        for gateway, _, _, kills in rigs.values():
            kills.append((int(time.time() * 1000), time.monotonic()))  # each gateway's own moment, just before
            gateway.kill()
        for _, start, _, _ in rigs.values():
            start()
    time.sleep(1.0)
    sent = {name: writer.finish() for name, (_, _, writer, _) in rigs.items()}
    window_ms = interval_ms or 1000
    for name, (gateway, _, writer, kills) in rigs.items():
        def may_be_missing(frames, writer=writer, kills=kills):
            return lost_on_gateway_clock(frames, writer, kills, window_ms)
        late_ms = (1 + len(kills)) * LEAD_MS if fsync is None else 60_000  # stamps on receipt: see above
        stored = check_rows(db, writer, sent[name], may_be_missing, who=name, late_ms=late_ms)
        print(f"{name}: sent {len(sent[name])}, stored {len(stored)}, lost {len(sent[name]) - len(stored)} "
              f"(allowed: {len(may_be_missing(stored))} read within {window_ms} ms before the 5 kills, "
              f"fsync {fsync or 'default'})")
        assert gateway.stop() == 0, name
