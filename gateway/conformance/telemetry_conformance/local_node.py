"""The local test node (deploy/local/cassandra, node TELEMETRY_TEST_NODE, default 1): a driver Cluster for it and
its schema runner. The suites' one connect helper; the root conftest.py re-exports both."""

from __future__ import annotations

import os
import subprocess

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import ConstantReconnectionPolicy, DCAwareRoundRobinPolicy
from telemetry_cassandra import cluster_from_env

from .commands import ROOT

MIGRATE = ROOT / "schema" / "migrate"
NODE = os.environ.get("TELEMETRY_TEST_NODE", "1")
HOST = f"127.0.0.{NODE}"


def connect(host: str, consistency: int | None = None) -> Cluster:
    """A Cluster for host (or several, comma-separated), or for TELEMETRY_CASSANDRA_HOSTS when set (with its
    credentials and TLS variables); its statements at `consistency` (a ConsistencyLevel) when given."""
    levels = {} if consistency is None else {"consistency_level": consistency}
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy("datacenter1"), request_timeout=30,
                               **levels)
    # Tests restart the node: reconnect every half second rather than backing off for minutes.
    return cluster_from_env(default_hosts=host, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                            reconnection_policy=ConstantReconnectionPolicy(0.5, max_attempts=None))


def migrate(*args: str) -> subprocess.CompletedProcess:
    hosts = os.environ.get("TELEMETRY_CASSANDRA_HOSTS") or HOST  # where connect() goes too
    return subprocess.run([str(MIGRATE), "--hosts", hosts, *args], capture_output=True, text=True, timeout=300)
