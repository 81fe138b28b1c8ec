"""The Pi install's schema runner and its closing lines, on the Node variant (the one whose install makes the Python
venv for the schema runner alone): telemetry-schema-migrate in place, running from the installed venv only (no
Spark there), the fresh install's "left:" lines, and, against the local Cassandra node, `install --migrate`
applying the schema from the installed config into a fresh keyspace so that the Node gateway's check passes.

One temporary root for the module; each install copies this checkout's node_modules and pip-installs the driver
from pip's cache (about 20 s)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from telemetry_conformance import Board
from pi_units import ROOT
from test_pi_install import INSTALL, NODE_MODULES, run, seeded_root, work  # noqa: F401 (work: a fixture)

VENV = "opt/telemetry-gateway/venv"
MIGRATE = "usr/local/bin/telemetry-schema-migrate"


def left_lines(output: str) -> list[str]:
    return [line.removeprefix("install: left: ") for line in output.splitlines() if line.startswith("install: left: ")]


@pytest.fixture(scope="module")
def node_install(work) -> tuple[Path, str]:
    root = seeded_root(work / "root")
    return root, run(INSTALL, "--node", "--root", root, "--node-modules-from", NODE_MODULES).stdout


def test_the_schema_runner_runs_from_the_installed_venv_alone(node_install):
    root, _ = node_install
    link = root / MIGRATE
    assert os.readlink(link) == f"/{VENV}/bin/telemetry-schema-migrate"
    command = root / VENV / "bin/telemetry-schema-migrate"
    clean = {"PATH": "/usr/bin:/bin"}  # nothing of this checkout: no PYTHONPATH, no .venv
    result = subprocess.run([command, "--help"], capture_output=True, text=True, env=clean, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("usage: telemetry-schema-migrate"), result.stderr
    python = root / VENV / "bin/python"
    probe = "import importlib.util as u; print([m for m in ('pyspark', 'telemetry_gateway') if u.find_spec(m)])"
    assert subprocess.run([python, "-c", probe], capture_output=True, text=True, env=clean).stdout == "[]\n"
    files = subprocess.run([python, "-c", "import telemetry_schema.migrate as m; print(sorted(p.name for p in "
                            "m.SCHEMA_DIR.glob('*.cql')))"], capture_output=True, text=True, env=clean).stdout
    assert files == repr(sorted(p.name for p in (ROOT / "schema").glob("[0-9]*.cql"))) + "\n"


def test_a_fresh_install_says_what_is_left(node_install):
    _, output = node_install
    assert "install: telemetry-gateway-node check --config /etc/telemetry-gateway/config.toml" in output
    assert "  check: 2 problem(s)" in output  # the example's port, no Cassandra (port 1)
    lines = left_lines(output)
    assert [line.split(":")[0] for line in lines] == ["ports", "keys", "credentials", "cassandra", "alerts",
                                                      "status page"]
    assert lines[3] == (
        "cassandra: cannot reach Cassandra at 127.0.0.1:1: set [cassandra] hosts and local_dc, then apply the schema: "
        "sudo TELEMETRY_CASSANDRA_CREDENTIALS_FILE=/etc/telemetry-gateway/credentials.toml telemetry-schema-migrate "
        "--config /etc/telemetry-gateway/config.toml")
    assert lines[5].startswith("status page: http://127.0.0.1:9108/ answers on this Pi only: to open it to the farm's "
                               'network set [metrics] listen = "0.0.0.0:9108"')


@pytest.mark.cassandra
def test_install_migrate_applies_the_schema_and_check_passes(node_install, work, cassandra_node, cql, fresh_keyspace):
    root, _ = node_install
    board = Board(work / "ttyUSB-board")  # a port that exists, so that check has nothing to report
    try:
        result = run(INSTALL, "--node", "--migrate", "--root", root, "--node-modules-from", NODE_MODULES, env={
            "TELEMETRY_CASSANDRA_HOSTS": cassandra_node, "TELEMETRY_CASSANDRA_PORT": "9042",
            "TELEMETRY_CASSANDRA_KEYSPACE": fresh_keyspace, "TELEMETRY_SERIAL_PORTS": str(board.link)})
    finally:
        board.unplug()
    output = result.stdout
    assert "  applied 001_core_tables.cql" in output and "  check: OK" in output, output
    assert f"cassandra {cassandra_node}:9042" in output and f"keyspace {fresh_keyspace}, schema version" in output
    tables = {row.table_name for row in cql.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", [fresh_keyspace])}
    assert {"readings", "source_days", "latest", "day_changes", "schema_migrations"} <= tables
    assert not [line for line in left_lines(output) if line.startswith(("cassandra", "schema"))], output
