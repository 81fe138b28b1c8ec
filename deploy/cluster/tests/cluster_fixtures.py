"""Fixtures of the cluster suites (`make test` runs them in a pytest session of their own, after the single-node
one, so that one cluster start serves them all): the 3-node cluster of deploy/cluster/up on 127.0.0.1-3 with a
Spark standalone master and worker, a node launcher, and QUORUM sessions.

127.0.0.1 is also the single local node's address: a single node that is up is stopped for the session and started
again afterwards. A cluster that was already up (CLUSTER_STATE_DIR, default .state/cluster) is used and left up.
Otherwise the session runs a throwaway cluster of its own in .state/cluster-test: wiped and started fresh (its nodes
start side by side), SIGKILLed at the end (nothing to drain); its logs stay there until the next session.

The cluster authenticates (deploy/cluster/up's default): for the session every client started here (gateways,
migrate, the Spark jobs, the suites' own sessions) logs in with the cluster's admin.toml through
TELEMETRY_CASSANDRA_CREDENTIALS_FILE. The least-privilege roles are tested on their own node
(deploy/local/tests/test_auth.py)."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from cassandra import ConsistencyLevel

from conftest import connect

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = ROOT / "deploy" / "cluster"
SINGLE_LAUNCHER = ROOT / "deploy" / "local" / "cassandra"
MIGRATE = ROOT / "schema" / "migrate"
NODES = 3
HOSTS = [f"127.0.0.{n}" for n in range(1, NODES + 1)]
SPARK_MASTER = "spark://127.0.0.1:7077"
THROWAWAY_STATE = ROOT / ".state" / "cluster-test"


def run(args: list[str], timeout: float = 600, check: bool = True, env: dict | None = None):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if check:
        assert done.returncode == 0, f"{' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"
    return done


def node(number: int, *args: str, check: bool = True, timeout: float = 300):
    """deploy/cluster/node N ARGS (start, stop, kill, nodetool, ...)."""
    return run([CLUSTER / "node", str(number), *args], timeout=timeout, check=check)


def flush_schema() -> None:
    """Every node writes its schema tables to disk. A node SIGKILLed soon after a schema change can otherwise come
    back without the change in its schema (the tables' rows are only in its commit log), refuse the new tables'
    writes and disagree with the others until `nodetool resetlocalschema`: Cassandra's hazard, not the gateway's,
    and not what these tests are about."""
    for number in range(1, NODES + 1):
        node(number, "nodetool", "flush", "system_schema")


def env_without_cassandra_settings() -> dict:
    """The cluster's scripts pick their own state and names; a test environment's CASSANDRA_* must not leak in."""
    return {k: v for k, v in os.environ.items() if not k.startswith("CASSANDRA_")}


@pytest.fixture(scope="session")
def cassandra_cluster():
    """The contact points of a 3-node cluster (RF 3 schema) with a Spark standalone master and one worker."""
    single_was_up = subprocess.run([str(SINGLE_LAUNCHER), "status"], capture_output=True).returncode == 0
    if single_was_up:
        run([SINGLE_LAUNCHER, "stop"])
    cluster_was_up = subprocess.run([str(CLUSTER / "status")], capture_output=True).returncode == 0
    state = os.environ.get("CLUSTER_STATE_DIR")
    credentials = os.environ.get("TELEMETRY_CASSANDRA_CREDENTIALS_FILE")
    try:  # a failed start too leaves the single node as it was
        if not cluster_was_up:
            os.environ["CLUSTER_STATE_DIR"] = str(THROWAWAY_STATE)
            run([CLUSTER / "down", "--kill", "--wipe"])  # one an interrupted session left behind
            run([CLUSTER / "up", "--nodes", str(NODES)], timeout=900)
        if os.environ.get("CLUSTER_AUTH", "1") == "1":
            state_dir = Path(os.environ.get("CLUSTER_STATE_DIR", ROOT / ".state" / "cluster"))
            admin_file = state_dir / "cassandra" / "admin.toml"
            assert admin_file.exists(), f"the cluster authenticates but {admin_file} is missing"
            os.environ["TELEMETRY_CASSANDRA_CREDENTIALS_FILE"] = str(admin_file)
        yield HOSTS
    finally:
        restore_env("TELEMETRY_CASSANDRA_CREDENTIALS_FILE", credentials)
        if not cluster_was_up:
            run([CLUSTER / "down", "--kill"], check=False)
            restore_env("CLUSTER_STATE_DIR", state)
        if single_was_up:
            run([SINGLE_LAUNCHER, "start"], check=False)


def restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def connect_cluster(hosts: list[str], consistency=ConsistencyLevel.QUORUM):
    """A driver Cluster (the suites' one connect helper) whose statements read and write at `consistency` (QUORUM:
    what was acknowledged at LOCAL_QUORUM is seen whichever replicas answer)."""
    return connect(",".join(hosts), consistency)


@pytest.fixture(scope="module")
def quorum(cassandra_cluster):
    cluster = connect_cluster(cassandra_cluster)
    session = cluster.connect()
    yield session
    cluster.shutdown()


@pytest.fixture
def rf3_keyspace(cassandra_cluster, quorum):
    """A fresh keyspace, NetworkTopologyStrategy datacenter1: 3, dropped afterwards."""
    name = f"cluster_{uuid.uuid4().hex[:10]}"
    run([MIGRATE, "--hosts", ",".join(cassandra_cluster), "--keyspace", name, "--dc", "datacenter1:3"])
    flush_schema()
    yield name
    quorum.execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=120)
