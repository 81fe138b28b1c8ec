"""deploy/cluster/bench: the pipeline on the local 3-node cluster against a single node, in one run, side by side.

- gateway ingest: the same corpus replayed by a gateway (`run --input FILE --exit-when-drained`) into the RF 3
  cluster at LOCAL_QUORUM, and into a single node (deploy/cluster/reference-node, same heap), alternated --rounds
  times; rows/s and the ratio (target >= 0.33: the same 2 cores do three times the writes on the cluster);
- the daily Spark job over the ingested days: on the standalone master against the cluster, and in local[*]
  against the single node (wall time of spark-submit, and the job's own work time);
- memory: resident and peak resident memory (VmRSS / VmHWM) of every JVM: the Cassandra nodes, the Spark master and
  worker, and the executor of the cluster's job (sampled while it runs), and each node's heap in use.

Prints figures; asserts nothing. Needs the cluster up (deploy/cluster/up) and the single local node down."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "deploy" / "cluster"
PYTHON = ROOT / ".venv" / "bin" / "python"
GATEWAYS = {"python": [str(ROOT / ".venv" / "bin" / "telemetry-gateway")],
            "node": [str(ROOT / "gateway" / "node" / "bin" / "telemetry-gateway-node")]}
CLUSTER_HOSTS = "127.0.0.1,127.0.0.2,127.0.0.3"
SINGLE_HOST = "127.0.0.4"
MASTER = "spark://127.0.0.1:7077"


def sh(*args, env: dict | None = None, timeout: float = 1800) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def migrate(hosts: str, keyspace: str, *replication: str) -> None:
    sh(ROOT / "schema" / "migrate", "--hosts", hosts, "--keyspace", keyspace, *replication)


def ingest(gateway: str, corpus: Path, hosts: str, keyspace: str, rows: int, work: Path) -> float:
    """rows/s of one replay of the corpus into keyspace, from the gateway's start to its exit (all acknowledged)."""
    spool = work / f"spool-{uuid.uuid4().hex[:6]}.sqlite"
    env = {"TELEMETRY_CASSANDRA_HOSTS": hosts, "TELEMETRY_CASSANDRA_KEYSPACE": keyspace,
           "TELEMETRY_CASSANDRA_CONSISTENCY": "LOCAL_QUORUM"}
    started = time.monotonic()
    sh(*GATEWAYS[gateway], "run", "--input", corpus, "--exit-when-drained", "--spool", spool, "--metrics-listen", "",
       "--log-level", "warning", env=env)
    seconds = time.monotonic() - started
    for path in work.glob(spool.name + "*"):
        path.unlink()
    return rows / seconds


def jvms() -> dict[str, int]:
    """pid by role for the JVMs of the cluster, the single node and Spark."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "CassandraDaemon" in cmdline:
            node = re.search(r"-Dcassandra\.storagedir=\S*/node(\d+)", cmdline)
            found["cassandra node " + (node.group(1) if node else "?")] = int(pid)
        elif "deploy.master.Master" in cmdline:
            found["spark master"] = int(pid)
        elif "deploy.worker.Worker" in cmdline:
            found["spark worker"] = int(pid)
        elif "CoarseGrainedExecutorBackend" in cmdline:
            found["spark executor"] = int(pid)
    return found


def memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss, hwm = (int(re.search(rf"^{k}:\s+(\d+) kB", status, re.M).group(1)) // 1024 for k in ("VmRSS", "VmHWM"))
    return rss, hwm


class ExecutorWatch(threading.Thread):
    """Peak resident memory of any Spark executor seen while a job runs."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(0.2):
            pid = jvms().get("spark executor")
            if pid:
                try:
                    self.peak = max(self.peak, memory(pid)[1])
                except (OSError, AttributeError):
                    pass


def daily(hosts: str, keyspace: str, master: str, first: str, last: str) -> tuple[float, float]:
    """(wall s of spark-submit, the job's own work s) of the daily job over [first, last] (UTC days)."""
    env = {"TELEMETRY_CASSANDRA_HOSTS": hosts, "TELEMETRY_CASSANDRA_KEYSPACE": keyspace}
    started = time.monotonic()
    done = sh(ROOT / "analytics" / "submit", "--master", master, "daily", "--tz", "UTC", "--from", first, "--to", last,
              env=env)
    wall = time.monotonic() - started
    work = re.search(r"work ([\d.]+) s", done.stdout + done.stderr)
    return wall, float(work.group(1)) if work else float("nan")


def main() -> int:
    p = argparse.ArgumentParser(prog="deploy/cluster/bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--gateway", choices=sorted(GATEWAYS), default="python")
    p.add_argument("--frames", type=int, default=100_000, help="frames in the corpus (4 values, so 4 rows, each)")
    p.add_argument("--rounds", type=int, default=2, help="ingest rounds, cluster and single node alternating")
    args = p.parse_args()

    if subprocess.run([str(CLUSTER / "status")], capture_output=True).returncode != 0:
        sys.exit("deploy/cluster/bench: the cluster is not healthy (deploy/cluster/up, deploy/cluster/status)")
    work = ROOT / ".state" / "cluster-bench"
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"frames-{args.frames}.txt"
    if not corpus.exists():
        # backfill of 2 days: one frame per source every `interval` s gives enough frames; --count cuts there
        interval = max(1, 2 * 86_400 * 20 // args.frames)
        sh(ROOT / ".venv" / "bin" / "telemetry-board-sim", "--output", corpus, "--sources", "20", "--count",
           args.frames, "--rate", "0", "--days", "2", "--interval", interval)
    with open(corpus, "rb") as f:
        frames = sum(1 for _ in f)
    rows = frames * 4
    print(f"deploy/cluster/bench: {args.gateway} gateway, {frames:,} frames ({rows:,} rows) of 20 sources over 2 days;"
          f" 3 nodes at RF 3 (LOCAL_QUORUM) against a single node, all on this machine's {os.cpu_count()} cores")

    sh(CLUSTER / "reference-node", "start")
    try:
        rates = {"cluster": [], "single": []}
        keyspaces = {}
        for round_ in range(args.rounds):
            for target, hosts, replication in (("cluster", CLUSTER_HOSTS, ("--dc", "datacenter1:3")),
                                               ("single", SINGLE_HOST, ())):
                keyspace = f"bench_{target}_{round_}"
                migrate(hosts, keyspace, *replication)
                rates[target].append(ingest(args.gateway, corpus, hosts, keyspace, rows, work))
                keyspaces[target] = keyspace
                print(f"  ingest round {round_ + 1}, {target}: {rates[target][-1]:,.0f} rows/s", flush=True)
        cluster_rate, single_rate = (statistics.median(rates[t]) for t in ("cluster", "single"))

        today = datetime.now(timezone.utc).date()
        # the board sim's --days 2: frames over the two days up to now
        first, last = (today.fromordinal(today.toordinal() - 2)).isoformat(), today.isoformat()
        watch = ExecutorWatch()
        watch.start()
        cluster_job = daily(CLUSTER_HOSTS, keyspaces["cluster"], MASTER, first, last)
        watch.done.set()
        single_job = daily(SINGLE_HOST, keyspaces["single"], "local[*]", first, last)

        print()
        print(f"{'':44}{'3 nodes, RF 3':>16}{'single node':>16}{'ratio':>10}")
        print(f"{'gateway ingest, rows/s (median)':44}{cluster_rate:>16,.0f}{single_rate:>16,.0f}"
              f"{cluster_rate / single_rate:>10.2f}   (target >= 0.33)")
        print(f"{'daily job, spark-submit wall s':44}{cluster_job[0]:>16.1f}{single_job[0]:>16.1f}"
              f"{cluster_job[0] / single_job[0]:>10.2f}   (standalone master vs local[*])")
        print(f"{'daily job, work s (after start-up)':44}{cluster_job[1]:>16.1f}{single_job[1]:>16.1f}"
              f"{cluster_job[1] / single_job[1]:>10.2f}")
        print()
        print("memory of each JVM (MiB): resident now / peak resident; Cassandra heap in use / heap size")
        for role, pid in sorted(jvms().items()):
            rss, hwm = memory(pid)
            heap = ""
            node = re.match(r"cassandra node (\d+)", role)
            if node:
                launcher = [CLUSTER / "reference-node"] if node.group(1) == "4" else [CLUSTER / "node", node.group(1)]
                info = subprocess.run([*map(str, launcher), "nodetool", "info"], capture_output=True, text=True)
                used = re.search(r"Heap Memory \(MB\)\s*:\s*([\d.]+) / ([\d.]+)", info.stdout)
                heap = f"   heap {float(used.group(1)):.0f} / {float(used.group(2)):.0f}" if used else ""
                role += " (single node)" if node.group(1) == "4" else ""
            print(f"  {role:32}{rss:>7} / {hwm:>7}{heap}")
        print(f"  {'spark executor (cluster job)':32}{'':>7}   {watch.peak:>7}  peak, sampled every 0.2 s")
        for round_ in range(args.rounds):  # the single node's data goes with it
            sh(CLUSTER / "node", "1", "cqlsh", "-e", f"DROP KEYSPACE IF EXISTS bench_cluster_{round_}")
    finally:
        sh(CLUSTER / "reference-node", "stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
