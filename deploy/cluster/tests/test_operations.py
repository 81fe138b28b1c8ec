"""Cluster operations an operator needs, tried on the local 3-node cluster (slow: `make test-slow`): a repair after a
node missed writes whose hints were dropped, replacing a dead node, and adding a fourth node that streams its share.
Each checks the node's own copy of the data (nodetool tablestats on that node) and the rows read at QUORUM."""

from __future__ import annotations

import re
import time
from datetime import date

import pytest

from cluster_fixtures import (CLUSTER, HOSTS, cassandra_cluster, connect_cluster, node, quorum,  # noqa: F401
                              rf3_keyspace, run)

pytestmark = [pytest.mark.cassandra, pytest.mark.slow]

SOURCES = [f"ops-{i}" for i in range(12)]
DAY = date(2026, 5, 4)


def write_rows(session, keyspace: str, values_per_source: int = 50) -> set[tuple]:
    insert = session.prepare(f"INSERT INTO {keyspace}.readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
    rows = set()
    for source in SOURCES:
        for i in range(values_per_source):
            row = (source, DAY, "temp_in", 1_777_852_800_000 + i * 60_000, i / 4)
            session.execute(insert, row)
            rows.add(row)
    return rows


def read_rows(session, keyspace: str) -> set[tuple]:
    rows = set()
    for source in SOURCES:
        for r in session.execute(f"SELECT source, day, metric, ts, value FROM {keyspace}.readings "
                                 "WHERE source = %s AND day = %s", [source, DAY]):
            rows.add((r.source, r.day.date(), r.metric, int(r.ts.timestamp() * 1000), r.value))
    return rows


def local_partitions(number: int, keyspace: str) -> int:
    """Partitions of readings in node N's own copy (memtables flushed first)."""
    node(number, "nodetool", "flush", keyspace)
    stats = node(number, "nodetool", "tablestats", f"{keyspace}.readings").stdout
    return int(re.search(r"Number of partitions \(estimate\): (\d+)", stats).group(1))


def test_repair_after_a_node_missed_writes_and_their_hints(cassandra_cluster, rf3_keyspace, quorum):
    """Node 3 is down while rows are written at QUORUM; the hints kept for it are dropped (as they are once it has
    been down longer than max_hint_window, 3 h); it comes back without those rows; deploy/cluster/repair gives them
    to it."""
    node(3, "kill")
    try:
        rows = write_rows(quorum, rf3_keyspace)
        for number in (1, 2):
            node(number, "nodetool", "truncatehints")
    finally:
        node(3, "start")
    assert local_partitions(3, rf3_keyspace) == 0  # it missed every write
    assert local_partitions(1, rf3_keyspace) == len(SOURCES)
    started = time.monotonic()
    run([CLUSTER / "repair", rf3_keyspace], timeout=900)
    print(f"repair of {len(rows)} rows over 3 nodes: {time.monotonic() - started:.0f} s")
    assert local_partitions(3, rf3_keyspace) == len(SOURCES)
    node(1, "kill")  # QUORUM is now nodes 2 and 3: node 3 must hold every row
    try:
        assert read_rows(quorum, rf3_keyspace) == rows
    finally:
        node(1, "start")


def test_replace_a_dead_node(cassandra_cluster, rf3_keyspace, quorum):
    """Node 3 dies with its disk; deploy/cluster/replace 3 starts an empty node in its place that streams its data."""
    rows = write_rows(quorum, rf3_keyspace)
    node(3, "kill")
    started = time.monotonic()
    run([CLUSTER / "replace", "3"], timeout=900)
    print(f"node 3 replaced in {time.monotonic() - started:.0f} s")
    assert local_partitions(3, rf3_keyspace) == len(SOURCES)
    node(2, "kill")  # QUORUM is now nodes 1 and 3
    try:
        assert read_rows(quorum, rf3_keyspace) == rows
    finally:
        node(2, "start")


def test_a_fourth_node_joins_and_takes_its_share(cassandra_cluster, rf3_keyspace, quorum):
    """deploy/cluster/up --nodes 4 on the running cluster: node 4 bootstraps, streams its ranges, and owns 75% of
    the RF 3 data like the others; then it is decommissioned again (its data streams back) and removed."""
    rows = write_rows(quorum, rf3_keyspace)
    started = time.monotonic()
    try:
        up = run([CLUSTER / "up", "--nodes", "4"], timeout=900)
        print(f"node 4 joined in {time.monotonic() - started:.0f} s")
        ring = node(1, "nodetool", "status", rf3_keyspace).stdout
        owns = dict(re.findall(r"^UN\s+(127\.0\.0\.\d)\s+\S+ \S+\s+\d+\s+([\d.]+)%", ring, re.M))
        assert set(owns) == {f"127.0.0.{n}" for n in range(1, 5)}, ring
        assert abs(sum(map(float, owns.values())) - 300) < 1, ring  # RF 3 over 4 nodes
        assert local_partitions(4, rf3_keyspace) > 0  # its share streamed to it
        assert read_rows(quorum, rf3_keyspace) == rows
        assert "status ALIVE" in up.stdout
    finally:
        node(4, "nodetool", "decommission", check=False, timeout=900)
        node(4, "stop", check=False)
        run(["rm", "-rf", str(CLUSTER.parent.parent / ".state" / "cluster" / "cassandra" / "node4")], check=False)
    assert read_rows(quorum, rf3_keyspace) == rows
