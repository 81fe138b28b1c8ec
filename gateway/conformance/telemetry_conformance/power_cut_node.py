"""A Cassandra node whose commit log lives on a power-cut file system (power_cut.PowerCutMount), for the scenario and
the benchmark about what the node's acknowledgement is worth after it loses power.

The node is deploy/local/cassandra --node 5 (127.0.0.5; TELEMETRY_POWER_CUT_NODE or node= picks another), a
one-node cluster of its own under .state/cassandra-power-cut, so the shared node 1 is never touched. Only the commit
log is on the power-cut file system: it is what makes an acknowledged write durable. The data folder stays on the
ordinary disk; Cassandra fsyncs a flushed sstable before it lets go of the commit-log segments that held its writes.

power_cut() is a power cut of the whole machine as the node sees it: the Cassandra process SIGKILLed, then every
write to its commit log that was not fsynced forgotten. start() again replays what the commit log kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import ConstantReconnectionPolicy, RoundRobinPolicy
from telemetry_cassandra import connect_cluster

from .commands import ROOT
from .power_cut import PowerCutMount

LAUNCHER = ROOT / "deploy" / "local" / "cassandra"
MIGRATE = ROOT / "schema" / "migrate"
NODE = os.environ.get("TELEMETRY_POWER_CUT_NODE", "5")
STATE = ROOT / ".state" / "cassandra-power-cut"


class PowerCutNode:
    """Node NODE with its commit log on a PowerCutMount; commitlog_sync "batch" (the launcher's) or "periodic"
    (Cassandra's default)."""

    def __init__(self, commitlog_sync: str = "batch", node: str = NODE, state: Path = STATE):
        self.node, self.host, self.state = node, f"127.0.0.{node}", state
        self.commitlog_sync = commitlog_sync
        self.mount = PowerCutMount(state / f"node{node}-commitlog-backing", state / f"node{node}-commitlog")
        self.cuts = 0

    def launcher(self, *args: str, timeout: float = 660) -> subprocess.CompletedProcess:
        # The caller's CASSANDRA_* and TELEMETRY_* settings are for other nodes.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CASSANDRA_", "TELEMETRY_"))}
        env.update(CASSANDRA_STATE_DIR=str(self.state), CASSANDRA_LIB_DIR=str(ROOT / ".state" / "cassandra" / "lib"),
                   CASSANDRA_SEEDS=self.host, CASSANDRA_CLUSTER_NAME="telemetry-power-cut",
                   CASSANDRA_START_TIMEOUT="600",  # minutes on a busy machine
                   CASSANDRA_COMMITLOG_DIR=str(self.mount.mountpoint / "commitlog"),
                   CASSANDRA_COMMITLOG_SYNC=self.commitlog_sync)
        return subprocess.run([str(LAUNCHER), "--node", self.node, *args], env=env, capture_output=True, text=True,
                              timeout=timeout)

    def start_fresh(self) -> float:
        """A new node on empty folders (what an interrupted earlier run left is removed); returns its start time."""
        self.launcher("kill")
        self.mount.stop()
        shutil.rmtree(self.state / f"node{self.node}", ignore_errors=True)
        shutil.rmtree(self.mount.backing_dir, ignore_errors=True)
        self.mount.start()
        return self.start()

    def start(self) -> float:
        """Starts the node on its folders (after a cut: the commit-log replay); seconds until CQL answered."""
        began = time.monotonic()
        started = self.launcher("start")
        if started.returncode != 0:
            raise AssertionError(f"node {self.node} did not start:\n{started.stdout}\n{started.stderr}")
        return time.monotonic() - began

    def power_cut(self) -> None:
        """SIGKILL of Cassandra, then the commit log's file system forgets what was not fsynced."""
        killed = self.launcher("kill")
        if "killed (SIGKILL" not in killed.stdout:
            raise AssertionError(f"node {self.node} was not running: {killed.stdout}{killed.stderr}")
        self.mount.cut()
        self.cuts += 1

    def close(self) -> None:
        """Kills the node (nothing to drain: the next run starts afresh) and unmounts."""
        self.launcher("kill")
        self.mount.stop()

    def migrate(self, keyspace: str, attempts: int = 3) -> None:
        """schema/migrate on this node; again after a failure (its lock is a lightweight transaction, several
        commit-log syncs in 2 s, which a busy machine can miss: a CAS write timeout)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TELEMETRY_")}
        for _ in range(attempts):
            migrated = subprocess.run([str(MIGRATE), "--hosts", self.host, "--keyspace", keyspace], env=env,
                                      capture_output=True, text=True, timeout=300)
            if migrated.returncode == 0:
                return
        raise AssertionError(f"schema/migrate on {self.host}, {attempts} attempts: {migrated.stdout}{migrated.stderr}")

    def cluster(self) -> Cluster:
        """A driver Cluster for this node alone (not TELEMETRY_CASSANDRA_HOSTS), reconnecting every half second."""
        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=30)
        return connect_cluster(self.host, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                               reconnection_policy=ConstantReconnectionPolicy(0.5, max_attempts=None),
                               connect_timeout=30, control_connection_timeout=30)

    def log_lines(self, *words: str) -> list[str]:
        """The node's system.log lines that contain any of words."""
        log = self.state / f"node{self.node}" / "logs" / "system.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return [line for line in text.splitlines() if any(word in line for word in words)]
