"""The whole radio path with nothing faked: sensor_node.elf boards → simulated nRF24L01+ → base_station.elf →
a real pty (scripts/radio-sim -r --pty-link) → the real gateway → the real Cassandra. What must land is what the
nodes put on the air, read from radio-sim's trace (PROTOCOL.md 6.2 payloads) and checked against the injected
voltages too."""

import json
from collections import defaultdict
from pathlib import Path

from telemetry_conformance import GatewayUnderTest, wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)
from radio_sim_runs import finish, in_frame_order, start_radio_sim, stored_values
from sim_expect import assert_node_values, payload_frame


def delivered_frames(trace: Path) -> dict[str, list[tuple[int, dict[str, float]]]]:
    """{source: [(seq, values), ...]} of every data packet the base station's radio took, in order."""
    frames = defaultdict(list)
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        if record.get("kind") == "data" and record["rx"].get("base") == "delivered":
            source, seq, values = payload_frame(bytes.fromhex(record["payload"]))
            frames[source].append((seq, values))
    return frames


def test_two_nodes_over_the_air_into_cassandra(tmp_path, keyspace, db, gateways, cassandra_node):
    link, trace = tmp_path / "ttyUSB-radio", tmp_path / "trace.jsonl"
    sim = start_radio_sim(link, trace, "--nodes", "2", "--sample-s", "2", "--seconds", "8", "--seed", "5")
    gateway = GatewayUnderTest.configure(tmp_path, [link], keyspace, cassandra_node)
    gateways.append(gateway)
    gateway.start()
    summary = finish(sim)
    sent = delivered_frames(trace)
    assert sorted(sent) == ["node1", "node2"]
    # Both nodes boot within the first 2.1 s, so each sends 3 or 4 samples in 8 s; all of them arrive.
    assert summary == {"simulated_ms": 8000, "delivered": len(sent["node1"]) + len(sent["node2"]), "lost": 0,
                       "dup_dropped": 0, "acks_lost": 0, "collisions": 0, "max_rt": 0, "forged": 0, "replayed": 0}
    for n, source in ((1, "node1"), (2, "node2")):
        assert [seq for seq, _ in sent[source]] == list(range(len(sent[source]))) and len(sent[source]) >= 3
        expected = [values for _, values in sent[source]]
        wait_for(lambda: len(stored_values(db, source)) == len(expected), 60, f"{source}'s rows")
        stored = [in_frame_order(values) for values in stored_values(db, source)]
        assert stored == expected  # exactly what went over the air, as doubles
        for values in stored:
            assert_node_values(values, n)
    assert gateway.metric("telemetry_gateway_seq_missing_frames_total", source="node1") == 0


def test_the_gateway_counts_a_lost_seq_a_restart_and_drops_a_repeated_seq_zero(tmp_path, keyspace, db, gateways,
                                                                             cassandra_node):
    """Node 1's seq 1 loses every retry: the node counts a failure, the gateway a missing frame. Then every board
    restarts twice (a power cut: radio-sim runs again, identically, each time just long enough for seq 0): the
    first seq 0 is a restart, stored; the second repeats the frame just before it and is dropped."""
    link = tmp_path / "ttyUSB-radio"
    traces = [tmp_path / f"run{i}.jsonl" for i in range(3)]
    args = ["--nodes", "1", "--sample-s", "2", "--seed", "9"]
    sim = start_radio_sim(link, traces[0], *args, "--seconds", "7", "--drop-data", "1:1:all")
    # A wide duplicate window: the repeat comes a few wall seconds later, more on a loaded machine.
    gateway = GatewayUnderTest.configure(tmp_path, [link], keyspace, cassandra_node,
                                         extra="[decode]\nduplicate_window_s = 600\n")
    gateways.append(gateway)
    gateway.start()
    summary = finish(sim)
    sent = delivered_frames(traces[0])["node1"]
    seqs = [seq for seq, _ in sent]
    assert seqs in ([0, 2], [0, 2, 3]), seqs  # node 1 boots within 2.1 s and samples every 2.05 s
    assert (summary["delivered"], summary["lost"], summary["max_rt"]) == (len(seqs), 16, 1)
    wait_for(lambda: gateway.metric("telemetry_gateway_seq_missing_frames_total", source="node1") == 1, 30,
             "the gap at seq 1 counted")

    # Again, just long enough for seq 0: the runs are identical, so node 1 boots when it did.
    boot_s = json.loads(next(line for line in traces[0].read_text().splitlines() if '"node1"' in line))["t_us"] / 1e6
    for trace in traces[1:]:
        sim = start_radio_sim(link, trace, *args, "--seconds", f"{boot_s + 1:.3f}")
        assert finish(sim)["delivered"] == 1
        assert delivered_frames(trace)["node1"] == sent[:1]  # seq 0 again, the same payload
        wait_for(lambda: gateway.metric("telemetry_gateway_board_restarts_total", source="node1") == 1, 30,
                 "the restart seen")
    wait_for(lambda: gateway.metric("telemetry_gateway_duplicates_total", source="node1") == 1, 30,
             "the repeated seq 0 dropped")
    wait_for(lambda: gateway.spool_depth() == 0 and len(stored_values(db, "node1")) > len(sent), 60,
             "node1's rows")
    stored = [in_frame_order(values) for values in stored_values(db, "node1")]
    assert stored == [values for _, values in sent] + [sent[0][1]]  # and seq 0 after the restart; not the repeat
    assert gateway.metric("telemetry_gateway_seq_missing_frames_total", source="node1") == 1
    assert gateway.metric("telemetry_gateway_board_restarts_total", source="node1") == 1
