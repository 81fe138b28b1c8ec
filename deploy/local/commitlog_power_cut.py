"""deploy/local/commitlog-power-cut: what a power cut of a Cassandra node loses of the writes it acknowledged, with
commitlog_sync batch (this project's nodes) and periodic (Cassandra's default), on node 5 (127.0.0.5; --node) with its
commit log on the power-cut file system (telemetry_conformance.power_cut_node). Each round: a client writes single
rows with --in-flight requests at a time and records each acknowledgement; after a random 2-8 s the node's power is
cut (SIGKILL, then every unsynced commit-log write forgotten); the node is started again (commit-log replay) and
every acknowledged row is read back. Prints per round the rows acknowledged, the rows lost, and how long before the
last acknowledgement the oldest lost row was acknowledged. Asserts nothing: the batch guarantee is asserted by the
conformance scenario test_cassandra_power_cut.py. The shared node 1 is not touched.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
import uuid

from telemetry_conformance.power_cut_node import NODE, PowerCutNode

SETTINGS = ("batch", "periodic")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="deploy/local/commitlog-power-cut", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="power cuts per setting (default 3)")
    parser.add_argument("--in-flight", type=int, default=32, help="writes in flight (default 32)")
    parser.add_argument("--node", default=NODE, help=f"the node number (default {NODE}: 127.0.0.{NODE})")
    parser.add_argument("--settings", default=",".join(SETTINGS),
                        help="commitlog_sync settings to measure, comma-separated (default batch,periodic)")
    args = parser.parse_args(argv)
    args.settings = args.settings.split(",")
    unknown = set(args.settings) - set(SETTINGS)
    if unknown:
        parser.error(f"--settings: unknown {', '.join(sorted(unknown))} (known: {', '.join(SETTINGS)})")
    return args


class AckingWriter(threading.Thread):
    """Single-row inserts, in_flight at a time, until stopped or the node stops answering; acked holds
    (row id, monotonic time of its acknowledgement)."""

    def __init__(self, session, table: str, in_flight: int):
        super().__init__(daemon=True)
        self.session, self.in_flight = session, in_flight
        self.insert = session.prepare(f"INSERT INTO {table} (id, v) VALUES (?, ?)")
        self.acked: list[tuple[int, float]] = []
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.next_id = 0

    def run(self) -> None:
        for _ in range(self.in_flight):
            self.send()
        self.stop_event.wait()

    def send(self) -> None:
        with self.lock:
            if self.stop_event.is_set():
                return
            row, self.next_id = self.next_id, self.next_id + 1
        future = self.session.execute_async(self.insert, (row, row))
        future.add_callbacks(self.acknowledged, self.failed, callback_args=(row,), errback_args=(row,))

    def acknowledged(self, _result, row: int) -> None:
        with self.lock:
            self.acked.append((row, time.monotonic()))
        self.send()

    def failed(self, _error, _row: int) -> None:
        self.stop_event.set()


def one_round(node: PowerCutNode, in_flight: int, rng: random.Random) -> dict:
    table = f"cut_{uuid.uuid4().hex[:8]}"
    cluster = node.cluster()
    try:
        session = cluster.connect("power_cut_bench")
        session.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v int)", timeout=60)
        writer = AckingWriter(session, f"power_cut_bench.{table}", in_flight)
        writer.start()
        time.sleep(rng.uniform(2, 8))
        node.power_cut()
        writer.stop_event.set()
        with writer.lock:
            acked = list(writer.acked)
    finally:
        cluster.shutdown()
    restart_s = node.start()
    cluster = node.cluster()
    try:
        session = cluster.connect("power_cut_bench")
        stored = {row.id for row in session.execute(f"SELECT id FROM {table}", timeout=60)}
    finally:
        cluster.shutdown()
    lost = [(row, at) for row, at in acked if row not in stored]
    last_ack = max((at for _, at in acked), default=0.0)
    return {"acked": len(acked), "lost": len(lost),
            "lost_span_ms": round((last_ack - min(at for _, at in lost)) * 1000) if lost else 0,
            "restart_s": restart_s}


def main(argv=None) -> int:
    args = parse_args(argv)
    rng = random.Random()
    print(f"{'commitlog_sync':<15} {'round':>5} {'acked':>7} {'lost':>6} {'oldest lost, ms before last ack':>32} "
          f"{'restart s':>9}")
    totals = {}
    for setting in args.settings:
        node = PowerCutNode(commitlog_sync=setting, node=args.node)
        try:
            node.start_fresh()
            cluster = node.cluster()
            try:
                cluster.connect().execute("CREATE KEYSPACE power_cut_bench WITH replication = "
                                          "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
            finally:
                cluster.shutdown()
            for n in range(1, args.rounds + 1):
                r = one_round(node, args.in_flight, rng)
                totals.setdefault(setting, []).append(r)
                print(f"{setting:<15} {n:>5} {r['acked']:>7} {r['lost']:>6} {r['lost_span_ms']:>32} "
                      f"{r['restart_s']:>9.1f}", flush=True)
        finally:
            node.close()
    for setting, rounds in totals.items():
        acked, lost = sum(r["acked"] for r in rounds), sum(r["lost"] for r in rounds)
        span = max(r["lost_span_ms"] for r in rounds)
        print(f"{setting}: {lost} of {acked} acknowledged writes lost in {len(rounds)} power cuts; "
              f"the oldest lost one at most {span} ms before the last acknowledgement")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
