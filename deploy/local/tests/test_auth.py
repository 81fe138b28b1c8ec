"""Authentication and least privilege on a real node (CASSANDRA_AUTH=1, the session's auth_node): the launcher's
admin role, the default superuser locked out, schema/migrate's roles doing exactly what they were granted, password
rotation, and clear refusals."""

import os
import stat
import subprocess
import uuid

import pytest
from cassandra import Unauthorized
from cassandra.cluster import NoHostAvailable
from telemetry_cassandra import connect_cluster, login_refused, read_credentials_file

from conftest import MIGRATE, AuthNode, auth_launcher, migrate_as_admin, write_private

pytestmark = pytest.mark.cassandra

def login(node: AuthNode, username: str, password: str):
    cluster = connect_cluster([node.host], username=username, password=password, connect_timeout=10)
    try:
        return cluster, cluster.connect(node.keyspace)
    except Exception:
        cluster.shutdown()
        raise


@pytest.fixture(scope="module")
def sessions(auth_node):
    """One session per role, and the admin's."""
    opened = {role: login(auth_node, role, password) for role, password in auth_node.passwords.items()}
    opened["admin"] = login(auth_node, *read_credentials_file(str(auth_node.admin_file)))
    yield {name: session for name, (_, session) in opened.items()}
    for cluster, _ in opened.values():
        cluster.shutdown()


def test_admin_credentials_are_private_and_the_default_superuser_cannot_log_in(auth_node, sessions):
    mode = stat.S_IMODE(os.stat(auth_node.admin_file).st_mode)
    assert mode == 0o600, oct(mode)
    username, password = read_credentials_file(str(auth_node.admin_file))
    assert username == "telemetry_admin" and len(password) >= 24
    assert sessions["admin"].execute("SELECT release_version FROM system.local").one().release_version.startswith("5.0")
    with pytest.raises(NoHostAvailable) as refused:
        login(auth_node, "cassandra", "cassandra")
    assert login_refused(refused.value)
    roles = {r.role: (r.is_superuser, r.can_login) for r in sessions["admin"].execute("SELECT * FROM system_auth.roles")}
    assert roles["cassandra"] == (False, False)
    assert roles["telemetry_admin"] == (True, True)
    assert {"telemetry_gateway", "telemetry_analytics", "telemetry_reader"} <= roles.keys()


def test_start_on_a_running_authenticating_node_logs_in_with_admin_toml(auth_node):
    again = auth_launcher("start")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already running" in again.stdout
    status = auth_launcher("status")
    assert status.returncode == 0 and f"up (pid" in status.stdout, status.stdout + status.stderr


READING = ("INSERT INTO readings (source, day, metric, ts, value) VALUES ('auth-test', '2026-11-25', 't', "
           "'2026-11-25 12:00:00+0000', 1.5)")
STATEMENTS = {
    "insert readings": READING,
    "delete readings": "DELETE FROM readings WHERE source = 'auth-test' AND day = '2026-11-25'",
    "insert source_days": "INSERT INTO source_days (day, source) VALUES ('2026-11-25', 'auth-test')",
    "insert latest": "INSERT INTO latest (source, metric, ts, value) VALUES ('auth-test', 't', "
                     "'2026-11-25 12:00:00+0000', 1.5)",
    "insert day_changes": "INSERT INTO day_changes (bucket, day, source, written_at) VALUES ("
                          "'2026-11-25 12:00:00+0000', '2026-11-25', 'auth-test', '2026-11-25 12:00:01+0000')",
    "insert daily_summary": "INSERT INTO daily_summary (source, tz, day, metric, count) VALUES ('auth-test', 'UTC', "
                            "'2026-11-25', 't', 1)",
    "insert job_watermarks": "INSERT INTO job_watermarks (job, scope, watermark) VALUES ('auth-test', 'UTC', "
                             "'2026-11-25 12:00:00+0000')",
    "select readings": "SELECT * FROM readings WHERE source = 'auth-test' AND day = '2026-11-25'",
    "select source_days": "SELECT * FROM source_days WHERE day = '2026-11-25'",
    "select latest": "SELECT * FROM latest WHERE source = 'auth-test'",
    "select day_changes": "SELECT * FROM day_changes WHERE bucket = '2026-11-25 12:00:00+0000'",
    "select daily_summary": "SELECT * FROM daily_summary WHERE source = 'auth-test'",
    "select job_watermarks": "SELECT * FROM job_watermarks WHERE job = 'auth-test'",
    "select schema_migrations": "SELECT max(version) FROM schema_migrations WHERE scope = 'telemetry_auth'",
    "drop readings": "DROP TABLE IF EXISTS readings",
    "truncate daily_summary": "TRUNCATE daily_summary",
    "create table": "CREATE TABLE IF NOT EXISTS intruder (k int PRIMARY KEY)",
    "alter keyspace": "ALTER KEYSPACE telemetry_auth WITH durable_writes = true",
    "create role": "CREATE ROLE IF NOT EXISTS intruder WITH LOGIN = true AND PASSWORD = 'x'",
    "grant": "GRANT SELECT ON TABLE readings TO telemetry_gateway",
}
ALLOWED = {
    "telemetry_gateway": {"insert readings", "delete readings", "insert source_days", "insert latest",
                          "insert day_changes", "select schema_migrations"},
    "telemetry_analytics": {"select readings", "select source_days", "select day_changes", "select job_watermarks",
                            "insert daily_summary", "insert job_watermarks", "truncate daily_summary"},
    "telemetry_reader": {name for name in STATEMENTS if name.startswith("select ")} - {"select schema_migrations"},
}
# MODIFY is Cassandra's one write permission: it covers INSERT, UPDATE, DELETE and TRUNCATE alike (the gateway may
# delete readings and the analytics role truncate daily_summary; neither can drop, create or grant).


@pytest.mark.parametrize("role", sorted(ALLOWED))
def test_each_role_may_do_exactly_what_it_was_granted(sessions, role):
    outcome = {}
    for name, statement in STATEMENTS.items():
        try:
            sessions[role].execute(statement)
            outcome[name] = True
        except Unauthorized:
            outcome[name] = False
    assert {name for name, allowed in outcome.items() if allowed} == ALLOWED[role]
    if "insert readings" in ALLOWED[role]:  # what the gateway wrote really landed
        row = sessions["admin"].execute(STATEMENTS["select latest"]).one()
        assert (row.metric, row.value) == ("t", 1.5)


def test_migrate_refuses_without_or_with_wrong_admin_credentials_and_never_prints_a_password(auth_node, tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("TELEMETRY_")}
    wrong = write_private(tmp_path / "wrong.toml", 'username = "telemetry_admin"\npassword = "not-the-password"\n')
    for extra in ({}, {"TELEMETRY_CASSANDRA_CREDENTIALS_FILE": str(wrong)}):
        result = subprocess.run([str(MIGRATE), "--hosts", auth_node.host, "--keyspace", auth_node.keyspace],
                                env={**base, **extra}, capture_output=True, text=True, timeout=120)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "refused the login" in result.stderr and "TELEMETRY_CASSANDRA_CREDENTIALS_FILE" in result.stderr
        assert "not-the-password" not in result.stdout + result.stderr


def test_a_role_passwords_file_naming_an_unknown_role_is_refused(auth_node, tmp_path):
    bad = write_private(tmp_path / "bad.toml", 'telemetry_gateway = "x1"\ntelemetry_root = "secret-root"\n')
    result = migrate_as_admin(auth_node, "--role-passwords", str(bad))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "telemetry_root" in result.stderr and "secret-root" not in result.stdout + result.stderr


def test_running_migrate_again_with_new_passwords_rotates_them(auth_node, tmp_path):
    old = auth_node.passwords["telemetry_reader"]
    new = f"rotated-{uuid.uuid4().hex}"
    rotation = write_private(tmp_path / "rotate.toml", f'telemetry_reader = "{new}"\n')
    result = migrate_as_admin(auth_node, "--role-passwords", str(rotation))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "password of role telemetry_reader set" in result.stdout
    assert new not in result.stdout + result.stderr
    auth_node.passwords["telemetry_reader"] = new
    with pytest.raises(NoHostAvailable) as refused:
        login(auth_node, "telemetry_reader", old)
    assert login_refused(refused.value)
    cluster, session = login(auth_node, "telemetry_reader", new)
    try:
        assert session.execute(STATEMENTS["select readings"]) is not None
    finally:
        cluster.shutdown()
