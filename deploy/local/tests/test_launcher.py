"""deploy/local/cassandra against the real node: idempotent start, status, cqlsh, nodetool, a stop/start that
keeps the data, and a kill (crash) that loses no acknowledged write."""

import threading
import time
import uuid
from pathlib import Path

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


def test_kill_then_start_keeps_every_acknowledged_write(cassandra_node):
    """`kill` is a crash (SIGKILL, no drain): the process is gone and the pidfile removed when it returns, and every
    write the node acknowledged up to the kill survives the restart (commitlog_sync: batch acks only what is
    fsynced to the commit log; with periodic, the acknowledged writes of the last ~100 ms were lost here)."""
    keyspace = f"test_kill_{uuid.uuid4().hex[:8]}"
    assert migrate("--keyspace", keyspace).returncode == 0
    marker = uuid.uuid4().hex
    pid = launcher("status").stdout.split("pid ")[1].split(",")[0]
    cluster = connect(cassandra_node)
    session = cluster.connect(keyspace)
    insert = session.prepare("INSERT INTO latest (source, metric, ts, value) VALUES (?, ?, toTimestamp(now()), ?)")
    acked: list[int] = []
    stop = threading.Event()

    def write():  # 20 writes in flight at a time until the node dies under them
        n = 0
        while not stop.is_set():
            futures = [(i, session.execute_async(insert, (marker, f"m{i}", float(i)))) for i in range(n, n + 20)]
            n += 20
            for i, future in futures:
                try:
                    future.result()
                    acked.append(i)
                except Exception:
                    stop.set()
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    time.sleep(1.5)
    assert acked and not stop.is_set(), "no writes before the kill"
    killed = launcher("kill")
    stop.set()
    writer.join(timeout=60)
    cluster.shutdown()
    assert f"killed (SIGKILL to pid {pid})" in killed.stdout
    assert not Path(f"/proc/{pid}/cmdline").exists() or not Path(f"/proc/{pid}/cmdline").read_bytes()
    assert launcher("status", check=False).returncode == 1
    assert "not running" in launcher("kill").stdout

    assert f"up: CQL at {HOST}:9042" in launcher("start").stdout
    cluster = connect(cassandra_node)
    try:
        session = cluster.connect(keyspace)
        rows = {r.metric: r.value for r in session.execute("SELECT metric, value FROM latest WHERE source = %s",
                                                           [marker])}
        missing = sorted(i for i in acked if f"m{i}" not in rows)
        print(f"{len(acked)} writes acknowledged before the kill, {len(missing)} of them lost")
        assert not missing, f"{len(missing)} of {len(acked)} acknowledged writes lost in the crash: {missing[:10]} …"
        assert all(rows[f"m{i}"] == float(i) for i in acked)
        session.execute(f"DROP KEYSPACE {keyspace}", timeout=60)
    finally:
        cluster.shutdown()
