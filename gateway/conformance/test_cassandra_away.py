"""Gateway conformance: the local Cassandra node stops (drained, gone for 20 s) and comes back while frames keep
arriving through a pty; every frame is stored exactly once. Every gateway under test, at each spool fsync policy
(the default and batch), runs side by side with a board, spool and source of its own, through the same outage: one
stop and start of the node serves them all."""

from __future__ import annotations

import time

import pytest

from conftest import connect, launcher
from telemetry_conformance import Stream, all_stored, wait_for
from telemetry_conformance.scenario_fixtures import gateways, keyspace, side_by_side  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: one outage for every gateway under test, not one per gateway


POLICIES = {"default": None, "batch": "batch"}  # tag -> spool fsync (None: the gateway's default)


def test_cassandra_away_for_20_s_mid_stream_loses_nothing(keyspace, cassandra_node, side_by_side):
    running = {}
    for tag, fsync in POLICIES.items():
        for name, (board, gateway, start) in side_by_side(tag=tag, fsync=fsync).items():
            start()
            running[name] = (board, gateway, Stream(f"G-{name}"))
    n = 0

    def send_for(seconds, rate=40):
        nonlocal n
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            n += 1
            for board, _, stream in running.values():
                board.write(stream.frame(n, temp_in=n / 10))
            time.sleep(1 / rate)

    send_for(2)
    launcher("stop")
    try:
        send_for(20)
        for name, (_, gateway, _) in running.items():
            wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") > 0, 10,
                     f"frames waiting in the {name} gateway's spool")
    finally:
        launcher("start")
    send_for(2)

    cluster = connect(cassandra_node)  # sessions from before the restart are still reconnecting
    try:
        session = cluster.connect(keyspace)
        for name, (_, _, stream) in running.items():
            stored = all_stored(session, stream, timeout=120)
            assert len(stored) == len(set(stored)) == n, \
                f"{name}: {len(stored)} rows of {len(set(stored))} frames, sent {n}"  # every frame exactly once
    finally:
        cluster.shutdown()
    for name, (_, gateway, _) in running.items():
        errors = sum(v for (metric, _), v in gateway.metrics_or_none().items()
                     if metric == "telemetry_gateway_write_errors_total")
        assert errors > 0, f"{name}: the outage was not seen"  # seen, retried, and survived
        assert gateway.stop() == 0, f"{name}: a clean stop"
