"""deploy/local/cassandra against the real node: idempotent start, status, cqlsh, nodetool, and a stop/start that
keeps the data."""

import time
import uuid

import pytest
from conftest import HOST, NODE, connect, launcher, migrate

pytestmark = pytest.mark.cassandra


def test_start_of_a_running_node_says_so(cassandra_node):
    result = launcher("start")
    assert "already running" in result.stdout
    assert launcher("status").returncode == 0


def test_cqlsh_and_nodetool(cassandra_node):
    cqlsh = launcher("cqlsh", "-e", "SELECT release_version FROM system.local")
    assert "5.0." in cqlsh.stdout
    nodetool = launcher("nodetool", "status")
    assert f"UN  {HOST}" in nodetool.stdout


def test_other_node_numbers_are_separate_and_down(cassandra_node):
    other = "9" if NODE != "9" else "8"
    status = launcher("--node", other, "status", check=False)
    assert status.returncode == 1 and f"node {other}: down" in status.stdout
    assert launcher("--node", "x", "status", check=False).returncode == 2


def test_stop_and_start_keep_the_data(cassandra_node):
    # Own keyspace and connections: every session open before the stop is reconnecting afterwards.
    keyspace = f"test_restart_{uuid.uuid4().hex[:8]}"
    assert migrate("--keyspace", keyspace).returncode == 0
    marker = uuid.uuid4().hex
    cluster = connect(cassandra_node)
    session = cluster.connect(keyspace)
    session.execute("INSERT INTO latest (source, metric, ts, value) VALUES (%s, 'temp_in', toTimestamp(now()), 1)",
                    [marker])
    cluster.shutdown()

    stopped = launcher("stop")
    assert "stopped" in stopped.stdout
    assert launcher("status", check=False).returncode == 1
    assert "not running" in launcher("stop").stdout

    begun = time.monotonic()
    started = launcher("start")
    took = time.monotonic() - begun
    print(f"restart reached CQL in {took:.1f} s: {started.stdout.strip()}")
    assert f"up: CQL at {HOST}:9042" in started.stdout
    assert launcher("status").returncode == 0

    cluster = connect(cassandra_node)
    try:
        session = cluster.connect(keyspace)
        row = session.execute("SELECT value FROM latest WHERE source = %s AND metric = 'temp_in'", [marker]).one()
        assert row is not None and row.value == 1
        assert "0 applied now" in migrate("--keyspace", keyspace).stdout
        session.execute(f"DROP KEYSPACE {keyspace}", timeout=60)
    finally:
        cluster.shutdown()
