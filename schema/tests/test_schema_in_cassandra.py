"""schema/migrate against the real local Cassandra: tables, keys, idempotence, refusals, and the queries the
project makes (none needs ALLOW FILTERING: Cassandra itself refuses such a query without it)."""

from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from cassandra.query import SimpleStatement

from conftest import migrate
from telemetry_schema.migration_plan import load_migrations

pytestmark = pytest.mark.cassandra

EXPECTED_KEYS = {
    # table: ([partition key], [(clustering column, order)], {regular or static column: type})
    "readings": (["source", "day"], [("metric", "asc"), ("ts", "desc")], {"value": "double"}),
    "source_days": (["day"], [("source", "asc")], {}),
    "latest": (["source"], [("metric", "asc")], {"ts": "timestamp", "value": "double"}),
    "daily_summary": (["source"], [("tz", "asc"), ("day", "asc"), ("metric", "asc")], {
        "count": "bigint", "min": "double", "min_ts": "timestamp", "max": "double", "max_ts": "timestamp",
        "mean": "double", "stddev": "double", "first_ts": "timestamp", "last_ts": "timestamp",
        "max_gap_ms": "bigint", "computed_at": "timestamp"}),
    "schema_migrations": (["scope"], [("version", "asc")], {
        "name": "text", "checksum": "text", "applied_at": "timestamp", "applied_by": "text", "lock_owner": "text"}),
    # 002: the analytics jobs' change log and watermarks
    "day_changes": (["bucket"], [("day", "asc"), ("source", "asc")], {"written_at": "timestamp"}),
    "job_watermarks": (["job"], [("scope", "asc")], {
        "watermark": "timestamp", "finished_at": "timestamp", "detail": "text"}),
}
KEY_TYPES = {"source": "text", "day": "date", "metric": "text", "ts": "timestamp", "tz": "text",
             "scope": "text", "version": "int", "bucket": "timestamp", "job": "text"}
LATEST_VERSION = load_migrations(Path(__file__).resolve().parents[1])[-1].version


@pytest.fixture
def migrated(cql, fresh_keyspace):
    result = migrate("--keyspace", fresh_keyspace)
    assert result.returncode == 0, result.stderr
    assert "applied 001_core_tables.cql" in result.stdout
    cql.set_keyspace(fresh_keyspace)
    return fresh_keyspace


def table_layout(cql, keyspace, table):
    rows = cql.execute("SELECT column_name, kind, position, clustering_order, type FROM system_schema.columns "
                       "WHERE keyspace_name = %s AND table_name = %s", [keyspace, table])
    partition, clustering, other = [], [], {}
    for r in sorted(rows, key=lambda r: r.position):
        if r.kind == "partition_key":
            partition.append(r.column_name)
        elif r.kind == "clustering":
            clustering.append((r.column_name, r.clustering_order))
        else:
            other[r.column_name] = r.type
        if r.kind != "regular" and r.kind != "static":
            assert r.type == KEY_TYPES[r.column_name], (table, r.column_name)
    return partition, clustering, other


def test_every_table_and_key(cql, migrated):
    tables = {r.table_name for r in cql.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", [migrated])}
    assert tables == set(EXPECTED_KEYS)
    for table, expected in EXPECTED_KEYS.items():
        assert table_layout(cql, migrated, table) == expected, table
    readings = cql.execute("SELECT compaction, default_time_to_live FROM system_schema.tables "
                           "WHERE keyspace_name = %s AND table_name = 'readings'", [migrated]).one()
    assert readings.compaction["class"].endswith("TimeWindowCompactionStrategy")
    assert readings.compaction["compaction_window_unit"] == "DAYS"
    assert readings.default_time_to_live == 0
    replication = cql.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                              [migrated]).one().replication
    assert replication["class"].endswith("SimpleStrategy") and replication["replication_factor"] == "1"


def test_second_run_changes_nothing(cql, migrated):
    before = list(cql.execute("SELECT version, checksum, applied_at FROM schema_migrations WHERE scope = %s",
                              [migrated]))
    again = migrate("--keyspace", migrated)
    assert again.returncode == 0, again.stderr
    assert "0 applied now" in again.stdout and "applied 001" not in again.stdout
    assert list(cql.execute("SELECT version, checksum, applied_at FROM schema_migrations WHERE scope = %s",
                            [migrated])) == before
    status = migrate("--keyspace", migrated, "--status")
    assert f"schema version {LATEST_VERSION}, 0 pending" in status.stdout


def test_without_authorization_no_roles_and_role_passwords_are_refused(cql, migrated, tmp_path):
    # The local node runs without authentication: roles are neither applied nor recorded, and asking to set their
    # passwords is an error that says how to turn authentication on.
    assert list(cql.execute("SELECT version FROM schema_migrations WHERE scope = %s", [f"{migrated}:roles"])) == []
    passwords = tmp_path / "pw.toml"
    passwords.write_text('telemetry_reader = "secret-reader"\n')
    result = migrate("--keyspace", migrated, "--role-passwords", str(passwords))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "does not authorize" in result.stderr and "CASSANDRA_AUTH=1" in result.stderr
    assert "secret-reader" not in result.stdout + result.stderr


def test_refuses_when_an_applied_file_changed(cql, migrated):
    # Same effect as editing 001_core_tables.cql after it was applied: the recorded checksum no longer matches.
    cql.execute("UPDATE schema_migrations SET checksum = 'edited' WHERE scope = %s AND version = 1", [migrated])
    result = migrate("--keyspace", migrated)
    assert result.returncode == 2
    assert "001_core_tables.cql changed after it was applied" in result.stderr


def test_waits_for_and_reports_another_runs_lock(cql, migrated):
    cql.execute("UPDATE schema_migrations USING TTL 60 SET lock_owner = 'someone@elsewhere' WHERE scope = %s",
                [migrated])
    result = migrate("--keyspace", migrated, "--lock-wait", "1")
    assert result.returncode == 2
    assert "someone@elsewhere" in result.stderr and "holds the lock" in result.stderr


def test_network_topology_replication_and_ttl(cql, fresh_keyspace):
    result = migrate("--keyspace", fresh_keyspace, "--dc", "datacenter1:1", "--readings-ttl", "86400")
    assert result.returncode == 0, result.stderr
    replication = cql.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                              [fresh_keyspace]).one().replication
    assert replication["class"].endswith("NetworkTopologyStrategy") and replication["datacenter1"] == "1"
    ttl = cql.execute("SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = %s "
                      "AND table_name = 'readings'", [fresh_keyspace]).one().default_time_to_live
    assert ttl == 86400


def test_unreachable_cluster_is_one_clear_line():
    result = migrate("--hosts", "127.0.0.1", "--port", "1", "--keyspace", "nowhere")
    assert result.returncode == 1
    assert result.stderr.startswith("schema/migrate: cannot migrate nowhere at 127.0.0.1:1")
    assert "Traceback" not in result.stderr


def ts(hour, minute=0):
    return datetime(2026, 3, 29, hour, minute, tzinfo=timezone.utc)


def test_the_projects_queries_are_partition_reads(cql, migrated):
    day = date(2026, 3, 29)
    insert = cql.prepare("INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
    for hour, temp in [(1, 3.5), (2, 1.5), (3, 2.5)]:
        cql.execute(insert, ["G", day, "temp_out", ts(hour), temp])
    cql.execute(insert, ["G", day, "temp_in", ts(1), 11.0])
    cql.execute("INSERT INTO source_days (day, source) VALUES (%s, 'G')", [day])

    # A metric's series for a time range of one source-day, newest first (clustering order).
    rows = cql.execute("SELECT ts, value FROM readings WHERE source = 'G' AND day = %s AND metric = 'temp_out' "
                       "AND ts >= %s AND ts < %s", [day, ts(1), ts(3)])
    assert [r.value for r in rows] == [1.5, 3.5]
    assert [r.source for r in cql.execute("SELECT source FROM source_days WHERE day = %s", [day])] == ["G"]

    cql.execute("INSERT INTO daily_summary (source, tz, day, metric, count, min, max) "
                "VALUES ('G', 'Europe/Zagreb', %s, 'temp_out', 3, 1.5, 3.5)", [day])
    rows = cql.execute("SELECT day, metric, min FROM daily_summary WHERE source = 'G' AND tz = 'Europe/Zagreb' "
                       "AND day >= %s AND day <= %s", [date(2026, 3, 1), date(2026, 3, 31)])
    assert [(r.metric, r.min) for r in rows] == [("temp_out", 1.5)]


def test_latest_never_moves_backwards_with_reading_timestamps(cql, migrated):
    # Writers stamp `latest` with the reading's time (USING TIMESTAMP, microseconds): a replayed older
    # reading loses against the newer one already there.
    upsert = cql.prepare("INSERT INTO latest (source, metric, ts, value) VALUES (?, ?, ?, ?) USING TIMESTAMP ?")
    micros = lambda t: int(t.timestamp() * 1_000_000)  # noqa: E731
    cql.execute(upsert, ["G", "temp_in", ts(12), 20.0, micros(ts(12))])
    cql.execute(upsert, ["G", "temp_in", ts(9), 15.0, micros(ts(9))])
    row = cql.execute("SELECT ts, value FROM latest WHERE source = 'G' AND metric = 'temp_in'").one()
    assert row.value == 20.0 and row.ts.replace(tzinfo=timezone.utc) == ts(12)


def test_a_scan_needs_allow_filtering(cql, migrated):
    # The guard the project relies on: a non-key predicate is refused by Cassandra, never run silently.
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        cql.execute(SimpleStatement("SELECT * FROM readings WHERE value > 1"))
