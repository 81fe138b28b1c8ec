"""Signed radio payloads end to end with an attacker on the air: sensor_node.elf boards signing every payload
(SIGNING=1, keys provisioned into their EEPROM by radio-sim --keys) → simulated nRF24L01+ → base_station.elf →
a real pty → the real gateway (every gateway under test, side by side) → the real Cassandra, while radio-sim's
attacker forges payloads for real node ids with wrong keys and plays back recorded ones, before and after a node
and a base station reboot. What the test knows comes from radio-sim's trace: the base station's lines, and which
of them the attacker's packets caused."""

import json
import os
import shlex
from collections import defaultdict
from pathlib import Path

from telemetry_conformance import GatewayUnderTest, gateways_under_test, wait_for
from telemetry_conformance.local_node import connect, migrate
from telemetry_conformance.scenario_fixtures import gateways, keyspace  # noqa: F401 (fixtures)
from radio_sim_runs import finish, in_frame_order, start_radio_sim, stored_values
from sim_expect import assert_node_values, payload_counter, payload_frame

KEYS = {"node1": "8f1c2d3e4a5b6c7d8e9fa0b1c2d3e4f5", "node2": "00112233445566778899AABBCCDDEEFF"}
NODE_REBOOT_S, BASE_REBOOT_S = 4.5, 7.0
RUN = ["--nodes", "2", "--sample-s", "2", "--seconds", "11", "--seed", "5", "--attack", "forge,replay",
       "--reboot-node", f"1:{NODE_REBOOT_S}", "--reboot-base", str(BASE_REBOOT_S)]


def read_trace(trace: Path) -> tuple[list[tuple[float, bytes]], dict[str, set[bytes]], dict[str, list[float]]]:
    """(t_s, payload) of every T2 line the base station printed, in order; the payloads of the attack packets the
    base station's radio took, by attack; and when each board booted."""
    printed, attacks, boots = [], defaultdict(set), defaultdict(list)
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        if record.get("board") == "base" and record["uart"].startswith("$T2,"):
            printed.append((record["t_us"] / 1e6, bytes.fromhex(record["uart"].split(",")[2].split("*")[0])))
        elif record.get("uart", "").startswith("# boot "):
            boots[record["board"]].append(record["t_us"] / 1e6)
        elif record.get("attack") and record["rx"].get("base") == "delivered":
            attacks[record["attack"]].add(bytes.fromhex(record["payload"]))
    return printed, attacks, boots


def check_run(name: str, summary: dict[str, int], trace: Path, gateway: GatewayUnderTest, db) -> None:
    printed, attacks, boots = read_trace(trace)
    forged = [payload for _, payload in printed if payload in attacks["forge"]]
    genuine, replayed, seen = defaultdict(list), [], set()
    for t, payload in printed:
        if payload in attacks["forge"]:
            continue
        if payload in seen:
            replayed.append((t, payload))
        else:
            seen.add(payload)
            genuine[payload[1]].append(payload)
    # Every attack packet that reached the base station's radio became a line, and every repeated line was one.
    assert (len(forged), len(replayed)) == (summary["forged"], summary["replayed"]), (name, summary)
    assert {payload for _, payload in replayed} <= attacks["replay"], name
    assert summary["forged"] >= 3 and summary["replayed"] >= 3, (name, summary)
    # Replays came after node 1's reboot (of its payloads from before) and after the base station's.
    node1_boot, base_boot = boots["node1"][1], boots["base"][1]
    assert any(t > node1_boot and p[1] == 1 and payload_counter(p) < 256 for t, p in replayed), name
    assert any(t > base_boot for t, _ in replayed), name
    # Node 1's counter only ever rises, across its reboot too: it skips to its next reserved block.
    counters = [payload_counter(p) for p in genuine[1]]
    assert counters == sorted(set(counters)) and counters[-1] >= 256 > counters[0], (name, counters)

    def verdicts() -> tuple[float, float, float]:
        return (gateway.metric("telemetry_gateway_rejects_total", reason="bad_mac"),
                gateway.metric("telemetry_gateway_rejects_total", reason="replay"),
                gateway.metric("telemetry_gateway_frames_accepted_total", format="signed"))
    expected = (len(forged), len(replayed), len(seen))
    try:
        wait_for(lambda: verdicts() == expected, 30, f"{name}: the gateway's verdicts")
    except AssertionError as timeout:
        raise AssertionError(f"{timeout}: (bad_mac, replay, signed accepted) {verdicts()} != {expected}") from None
    for node in (1, 2):
        source = f"node{node}"
        expected = [payload_frame(p)[2] for p in genuine[node]]
        wait_for(lambda: len(stored_values(db, source)) >= len(expected), 30, f"{name}: {source}'s rows")
        stored = [in_frame_order(values) for values in stored_values(db, source)]
        assert stored == expected, name  # each genuine frame once, in order; nothing forged, nothing replayed
        for values in stored:
            assert_node_values(values, node)
    assert gateway.metric("telemetry_gateway_rejects_total", reason="unsigned") == 0, name


def test_forged_and_replayed_payloads_never_land(tmp_path, keyspace, cql, cassandra_node, gateways, monkeypatch):
    keys = tmp_path / "keys.txt"
    keys.write_text("".join(f"{source} {key}\n" for source, key in KEYS.items()))
    os.chmod(keys, 0o600)
    names = list(gateways_under_test())
    # A keyspace per gateway: they store the same sources side by side.
    keyspaces = {name: keyspace if i == 0 else f"{keyspace}_{i}" for i, name in enumerate(names)}
    try:
        for ks in list(keyspaces.values())[1:]:
            assert migrate("--keyspace", ks).returncode == 0
        runs = {}
        for name, command in gateways_under_test().items():
            folder = tmp_path / name
            folder.mkdir()
            link, trace = folder / "ttyUSB-radio", folder / "trace.jsonl"
            sim = start_radio_sim(link, trace, *RUN, "--keys", str(keys))
            gateway = GatewayUnderTest.configure(folder, [link], keyspaces[name], cassandra_node,
                                                 extra=f"[signing]\nkeys_file = {json.dumps(str(keys))}\n")
            gateways.append(gateway)
            monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
            gateway.start()
            runs[name] = (sim, trace, gateway)
        for name, (sim, trace, gateway) in runs.items():
            summary = finish(sim)
            cluster = connect(cassandra_node)
            try:
                check_run(name, summary, trace, gateway, cluster.connect(keyspaces[name]))
            finally:
                cluster.shutdown()
    finally:
        for ks in list(keyspaces.values())[1:]:
            cql.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=60)
