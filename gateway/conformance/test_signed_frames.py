"""Gateway conformance (gateway/contract/signing.md): signed T2 lines through a pty into Cassandra. A forged frame,
a replay, an unsigned frame from a source with a key are rejected and counted by reason (per source too, on
/status.json); a source without a key still sends unsigned frames; after a restart, and after a SIGKILL, a frame
accepted before it is a replay. Exact rows. Every gateway under test side by side."""

from __future__ import annotations

import os

import pytest

from telemetry_conformance import Stream, gateways_under_test, toml_value, utc_days_around_now, wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace, side_by_side  # noqa: F401 (fixtures)
from telemetry_conformance.signed_lines import signed_payload, t2_line

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side

KEY = bytes(range(16))  # the signing node's
OTHER_KEY = bytes(16)  # the unsigned node's; also the forger's guess
TEMP_IN = 1  # metric id (PROTOCOL.md 6.3): temp_in, 2 decimals


def signed_frame(node: int, number: int, counter: int, seq: int, key: bytes = KEY) -> bytes:
    """Frame number `number` of a signing node, carried as temp_in = number."""
    return t2_line(node, signed_payload(key, node, seq, counter, [(TEMP_IN, number * 100)], vbat_mv=3300))


def temps(db, source: str) -> list[float]:
    """Every temp_in stored for source, a frame stored twice showing twice."""
    return sorted(row.value for day in utc_days_around_now() for row in db.execute(
        "SELECT value FROM readings WHERE source = %s AND day = %s AND metric = 'temp_in'", [source, day]))


def rejects(gateway) -> dict[str, float]:
    return {reason: gateway.metric("telemetry_gateway_rejects_total", reason=reason)
            for reason in ("bad_mac", "replay", "unsigned")}


def source_rejects(gateway) -> dict[str, dict[str, int]]:
    """/status.json's rejects of each source listed."""
    return {entry["source"]: entry["rejects"] for entry in gateway.status()["sources"]}


def test_forged_replayed_and_unsigned_frames_are_refused_across_a_restart(db, side_by_side, tmp_path):
    keys = tmp_path / "keys"
    # Per gateway (one keyspace): node n signs, node n+1 has a key but sends unsigned T1 frames, node n+2 has none
    # and is named in unsigned_allowed (a board not keyed yet, heard on the radio input while the farm migrates).
    nodes = {name: 10 * i + 3 for i, name in enumerate(gateways_under_test())}
    allowed = [f"node{n + 2}" for n in nodes.values()]
    rigs = side_by_side(extra=f'\n[signing]\nkeys_file = "{keys}"\nunsigned_allowed = {toml_value(allowed)}\n')
    keys.write_text("# test keys\n" + "".join(f"node{n} {KEY.hex()}\nnode{n + 1} {OTHER_KEY.hex()}\n"
                                              for n in nodes.values()))
    os.chmod(keys, 0o600)
    for _, _, start in rigs.values():
        start()
    for name, (board, _, _) in rigs.items():
        n = nodes[name]
        unsigned_with_key, unsigned = Stream(f"node{n + 1}"), Stream(f"node{n + 2}")
        board.write(signed_frame(n, 1, 100, 0) + signed_frame(n, 2, 101, 1) + signed_frame(n, 3, 105, 2)
                    + signed_frame(n, 9, 500, 3, key=OTHER_KEY)  # forged: a wrong key, a counter far ahead
                    + signed_frame(n, 2, 101, 1)  # replayed
                    + unsigned_with_key.frame(7, temp_in=7.0) + unsigned.frame(8, temp_in=8.0))
    for name, (_, gateway, _) in rigs.items():
        wait_for(lambda: rejects(gateway) == {"bad_mac": 1, "replay": 1, "unsigned": 1}, 20, f"{name}: rejects")
        assert gateway.metric("telemetry_gateway_frames_accepted_total", format="signed") == 3, name
        n = nodes[name]  # node n+1 is listed for its key alone: its only frame was refused
        expected = {f"node{n}": {"bad_mac": 1, "replay": 1}, f"node{n + 1}": {"unsigned": 1}, f"node{n + 2}": {}}
        wait_for(lambda: source_rejects(gateway) == expected, 10, f"{name}: rejects per source")
        assert gateway.stop() == 0, name
    for _, _, start in rigs.values():
        start()
    for name, (board, _, _) in rigs.items():  # frame 3 replayed after the restart; then a new one
        board.write(signed_frame(nodes[name], 3, 105, 2) + signed_frame(nodes[name], 4, 106, 0))
    for name, (_, gateway, _) in rigs.items():
        wait_for(lambda: gateway.metric("telemetry_gateway_frames_accepted_total", format="signed") == 1, 20,
                 f"{name}: the new frame after the restart")
        assert rejects(gateway) == {"bad_mac": 0, "replay": 1, "unsigned": 0}, name
        assert source_rejects(gateway) == {f"node{nodes[name]}": {"replay": 1}}, name
        assert "event=frame_rejected" in gateway.log() and KEY.hex() not in gateway.log(), name
    # A crash: a frame in Cassandra had its counter committed before it could be sent, so its replay is refused.
    for name, n in nodes.items():
        wait_for(lambda: temps(db, f"node{n}") == [1.0, 2.0, 3.0, 4.0], 20, f"{name}: node{n}'s rows, each once")
        rigs[name][1].kill()
        rigs[name][2]()
        rigs[name][0].write(signed_frame(n, 4, 106, 0))
    for name, (_, gateway, _) in rigs.items():
        wait_for(lambda: rejects(gateway)["replay"] == 1, 20, f"{name}: the replay after the crash")
        assert gateway.stop() == 0, name
    for name, n in nodes.items():
        assert temps(db, f"node{n}") == [1.0, 2.0, 3.0, 4.0], name
        assert temps(db, f"node{n + 1}") == [], name
        assert temps(db, f"node{n + 2}") == [8.0], name
