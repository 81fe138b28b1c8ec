"""Fixtures shared by every suite: the real local Cassandra node, started through deploy/local/cassandra.

TELEMETRY_TEST_NODE=N (default 1) runs the suites against node N on 127.0.0.N, so two people (or agents) on one
machine can each have a node; give each its own CASSANDRA_STATE_DIR and CASSANDRA_SEEDS=127.0.0.N too.
"""

import errno
import os
import secrets
import shlex
import shutil
import subprocess
import unittest
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from telemetry_conformance import GATEWAY_COMMANDS
from telemetry_conformance.commands import gateways_under_test
from telemetry_conformance.local_node import HOST, MIGRATE, NODE, connect, migrate  # re-exported for the suites

ROOT = Path(__file__).resolve().parent
LAUNCHER = ROOT / "deploy" / "local" / "cassandra"


# No silent skips in CI: with CI=true (or 1) a skip (a skipif mark, pytest.skip() in a fixture or a test) fails the
# test instead, its reason in the failure; a module-level skip fails its collection. xfail is not a skip: untouched.
CI = os.environ.get("CI", "").lower() in ("true", "1")
SKIPS = (pytest.skip.Exception, unittest.SkipTest)


def _no_skip_in_ci():
    try:
        return (yield)
    except SKIPS as skip:
        if not CI:
            raise
        reason = getattr(skip, "msg", None) or str(skip)
    pytest.fail(f"skipped, and CI={os.environ['CI']} allows no skips: {reason}", pytrace=False)  # not chained to it


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):  # skipif marks and fixtures
    return (yield from _no_skip_in_ci())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):  # the test itself
    return (yield from _no_skip_in_ci())


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    report = yield
    if CI and report.skipped:
        reason = report.longrepr[2].removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, and CI={os.environ['CI']} allows no skips: {reason}"
    return report


# The conformance scenarios run once per gateway of the kit's GATEWAY_COMMANDS (gateways_under_test()). GATEWAY_COMMAND runs them against that
# one command instead; CONFORMANCE_GATEWAYS=python (or node) against one of these.
CONFORMANCE = ROOT / "gateway" / "conformance"


def pytest_generate_tests(metafunc):
    """Each conformance scenario once per gateway, as test[python] and test[node]; a module that runs several
    gateways itself (gateways_under_test(), side by side) says so with EVERY_GATEWAY_INSIDE = True."""
    if CONFORMANCE not in metafunc.definition.path.parents or getattr(metafunc.module, "EVERY_GATEWAY_INSIDE", False):
        return
    metafunc.parametrize("gateway_implementation", list(gateways_under_test()), indirect=True)


@pytest.fixture(autouse=True)
def gateway_implementation(request, monkeypatch):
    """The gateway a conformance scenario drives (harness.gateway_command() reads GATEWAY_COMMAND)."""
    name = getattr(request, "param", None)
    if name in GATEWAY_COMMANDS:
        monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(GATEWAY_COMMANDS[name]))
    return name


def launcher(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """deploy/local/cassandra for the test node; `--node` given in args picks another."""
    node_args = [] if "--node" in args else ["--node", NODE]
    return subprocess.run([str(LAUNCHER), *node_args, *args], capture_output=True, text=True, check=check,
                          timeout=timeout)


@pytest.fixture(scope="session")
def cassandra_node():
    """127.0.0.1:9042 answering CQL. Started if it was down, and then stopped again after the run."""
    was_up = launcher("status", check=False).returncode == 0
    if not was_up:
        started = launcher("start", check=False)
        assert started.returncode == 0, f"local Cassandra did not start:\n{started.stdout}\n{started.stderr}"
        was_up = "already" in started.stdout  # a status check that failed under load: not ours to stop
    yield HOST
    if not was_up:
        launcher("stop", check=False)


@pytest.fixture(scope="module")
def cql(cassandra_node):
    """A driver session for one test module (modules that restart the node open their own)."""
    cluster = connect(cassandra_node)
    session = cluster.connect()
    yield session
    cluster.shutdown()


@pytest.fixture
def fresh_keyspace(cql):
    """A unique keyspace name, dropped after the test."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    yield name
    cql.execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=60)


# A node with authentication on (CASSANDRA_AUTH=1): a one-node cluster of its own on 127.0.0.2 (TELEMETRY_AUTH_TEST_NODE
# picks another), started once per session by the tests that ask for it, with the schema, the roles and their
# passwords applied by schema/migrate as the launcher's admin.
AUTH_NODE = os.environ.get("TELEMETRY_AUTH_TEST_NODE", "2")
AUTH_HOST = f"127.0.0.{AUTH_NODE}"
AUTH_STATE = ROOT / ".state" / "cassandra-auth"
AUTH_KEYSPACE = "telemetry_auth"


def write_private(path: Path, text: str) -> Path:
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(text)
    return path


@dataclass
class AuthNode:
    host: str
    keyspace: str
    admin_file: Path
    passwords_file: Path
    passwords: dict[str, str]  # role -> its current password (a rotation test updates it)

    def credentials_file(self, folder: Path, role: str, password: str | None = None) -> Path:
        """A 0600 credentials_file for role (with its current password unless another is given)."""
        password = self.passwords[role] if password is None else password
        return write_private(folder / f"{role}.toml", f'username = "{role}"\npassword = "{password}"\n')


def auth_launcher(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEMETRY_", "CASSANDRA_"))}
    env.update(CASSANDRA_STATE_DIR=str(AUTH_STATE), CASSANDRA_LIB_DIR=str(ROOT / ".state" / "cassandra" / "lib"),
               CASSANDRA_SEEDS=AUTH_HOST, CASSANDRA_CLUSTER_NAME="telemetry-auth-test", CASSANDRA_AUTH="1",
               CASSANDRA_HEAP="512M")
    return subprocess.run([str(LAUNCHER), "--node", AUTH_NODE, *args], env=env, capture_output=True, text=True,
                          timeout=300)


def migrate_as_admin(node: AuthNode, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TELEMETRY_")}
    env["TELEMETRY_CASSANDRA_CREDENTIALS_FILE"] = str(node.admin_file)
    return subprocess.run([str(MIGRATE), "--hosts", node.host, "--keyspace", node.keyspace, *args], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def auth_node(tmp_path_factory) -> AuthNode:
    auth_launcher("stop")  # one left by an interrupted run: its data is replaced
    shutil.rmtree(AUTH_STATE / f"node{AUTH_NODE}", ignore_errors=True)
    (AUTH_STATE / "admin.toml").unlink(missing_ok=True)
    started = auth_launcher("start")
    assert started.returncode == 0, f"node {AUTH_NODE} with authentication did not start:\n{started.stdout}\n{started.stderr}"
    passwords = {role: secrets.token_urlsafe(16) for role in ("telemetry_gateway", "telemetry_analytics",
                                                                "telemetry_reader")}
    folder = tmp_path_factory.mktemp("auth")
    passwords_file = write_private(folder / "role-passwords.toml",
                                   "".join(f'{role} = "{password}"\n' for role, password in passwords.items()))
    node = AuthNode(AUTH_HOST, AUTH_KEYSPACE, AUTH_STATE / "admin.toml", passwords_file, passwords)
    migrated = migrate_as_admin(node, "--role-passwords", str(passwords_file))
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    yield node
    auth_launcher("kill")  # the next session drops its data: nothing to drain


@pytest.fixture
def small_tmpfs(tmp_path):
    """A real 8 MiB tmpfs (for full-disk tests: ENOSPC from the kernel, not a size cap), unmounted afterwards.
    Mounting needs root, which `make test` has on the machines it is meant for."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for the full-disk test needs root")
    mount = tmp_path / "small-disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill_disk(folder: Path) -> Path:
    """Writes to a file in folder until the disk refuses (ENOSPC); returns it (delete it to free the room).
    Called again, it takes whatever room was freed meanwhile."""
    filler = folder / "filler"
    chunk = b"\0" * 65536
    with open(filler, "ab", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError as error:
            assert error.errno == errno.ENOSPC, error
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
    return filler
