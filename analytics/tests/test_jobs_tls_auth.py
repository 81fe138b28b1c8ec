"""The daily job (analytics/submit, real Spark) against a real node that takes only TLS and authenticates: node 7
(127.0.0.7, a one-node cluster of its own, state under .state/cassandra-analytics-tls), started by
deploy/local/cassandra with CASSANDRA_AUTH=1 and client-to-node TLS from deploy/tls/make-test-certs. The schema,
the roles and their passwords are applied by schema/migrate as the launcher's admin; the job logs in as
telemetry_analytics. First the node only proves who it is; then it also requires a client certificate (the one
restart). Every successful run must write exactly the reference's daily_summary; no password may appear in the
job's output or on any process's command line while it runs."""

from __future__ import annotations

import os
import secrets
import subprocess
import threading
import time
from datetime import date
from pathlib import Path
from typing import NamedTuple

import pytest
from telemetry_analytics_kit import reference
from telemetry_analytics_kit.checks import assert_matches, summary_rows
from telemetry_analytics_kit.loader import CassandraLoader, greenhouse_readings
from telemetry_cassandra import connect_cluster, read_credentials_file

from analytics_fixtures import ms, thinned
from deploy.tls.tls_node import TlsNode, clean_env, make_test_certs

pytestmark = pytest.mark.cassandra

ROOT = Path(__file__).resolve().parents[2]
MIGRATE = ROOT / "schema" / "migrate"
SUBMIT = ROOT / "analytics" / "submit"
NODE, HOST = "7", "127.0.0.7"
STATE = ROOT / ".state" / "cassandra-analytics-tls"  # node7's data and admin.toml are replaced at each module start
KEYSPACE = "analytics_tls"
ROLE = "telemetry_analytics"
TZ = "UTC"
# Two greenhouses, a frame every 5 minutes over three UTC days, a few frames dropped: 3 days × 2 sources × 4 metrics.
READINGS = [r for i, s in enumerate(("gh-a", "gh-b"))
            for r in thinned(greenhouse_readings(s, ms(2026, 3, 27), ms(2026, 3, 30), 300_000, seed=i), i)]
EXPECTED = reference.daily(READINGS, TZ)


class Pki(NamedTuple):
    dir: Path  # make-test-certs' output: ca.crt, node.*, client.*, wrong/
    passwords: Path  # schema/migrate --role-passwords file
    password: str  # telemetry_analytics's
    credentials: Path  # its credentials_file
    wrong_credentials: Path  # the same user, another password

    def tls(self, ca: str | None = "ca.crt", client: str | None = None) -> dict[str, str]:
        """TELEMETRY_CASSANDRA_TLS_* for a CA file of the folder (None: no TLS) and a client certificate
        ("client" or "wrong/client"; None: none)."""
        env = {"TELEMETRY_CASSANDRA_TLS_CA": str(self.dir / ca)} if ca else {}
        if client:
            env.update(TELEMETRY_CASSANDRA_TLS_CERT=str(self.dir / f"{client}.crt"),
                       TELEMETRY_CASSANDRA_TLS_KEY=str(self.dir / f"{client}.key"))
        return env


def private(path: Path, text: str) -> Path:
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    base = tmp_path_factory.mktemp("analytics-tls")
    make_test_certs(base / "pki", "--nodes", "0", "--hosts", HOST)
    passwords = {role: secrets.token_urlsafe(16) for role in ("telemetry_gateway", ROLE, "telemetry_reader")}
    roles = private(base / "role-passwords.toml", "".join(f'{r} = "{p}"\n' for r, p in passwords.items()))
    mine = passwords[ROLE]
    return Pki(base / "pki", roles, mine,
               private(base / "analytics.toml", f'username = "{ROLE}"\npassword = "{mine}"\n'),
               private(base / "wrong.toml", f'username = "{ROLE}"\npassword = "{mine[::-1]}x"\n'))


class AdminSession:
    """A driver session as the launcher's admin, over TLS with the client certificate (either mode accepts it)."""

    def __init__(self, pki: Pki) -> None:
        username, password = read_credentials_file(str(STATE / "admin.toml"))
        tls = pki.tls(client="client")
        self.cluster = connect_cluster([HOST], username=username, password=password,
                                       tls_ca=tls["TELEMETRY_CASSANDRA_TLS_CA"],
                                       tls_cert=tls["TELEMETRY_CASSANDRA_TLS_CERT"],
                                       tls_key=tls["TELEMETRY_CASSANDRA_TLS_KEY"], connect_timeout=20)

    def __enter__(self):
        return self.cluster.connect()

    def __exit__(self, *_exc) -> None:
        self.cluster.shutdown()


@pytest.fixture(scope="module")
def node(pki):
    """Node 7 with authentication and client TLS; `ensure` (re)starts it in the wanted client-auth mode, and after
    the first start the schema, roles and passwords are applied and READINGS loaded, as the admin."""
    def prepare(_node: TlsNode) -> None:
        env = clean_env(TELEMETRY_CASSANDRA_CREDENTIALS_FILE=str(STATE / "admin.toml"), **pki.tls(client="client"))
        done = subprocess.run([str(MIGRATE), "--hosts", HOST, "--keyspace", KEYSPACE, "--role-passwords",
                               str(pki.passwords)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        with AdminSession(pki) as session:
            CassandraLoader(session, KEYSPACE).write(READINGS)

    (STATE / "admin.toml").unlink(missing_ok=True)  # the first start makes a new admin
    with TlsNode(NODE, STATE, pki.dir, "telemetry-analytics-tls", prepare=prepare, CASSANDRA_AUTH="1",
                 CASSANDRA_HEAP="512M", CASSANDRA_LIB_DIR=str(ROOT / ".state" / "cassandra" / "lib")).owned() as tls:
        yield tls


@pytest.fixture
def server_tls(node, pki):
    """The node verifies nobody's certificate; TLS proves the node to the client. No summary and no watermark yet."""
    started = node.ensure(require_client_auth=False)
    assert started is None or "authentication on" in started.stdout
    return reset(pki)


@pytest.fixture
def mutual_tls(node, pki):
    """The node requires a client certificate signed by its CA. No summary and no watermark yet."""
    started = node.ensure(require_client_auth=True)
    assert started is None or "authentication on" in started.stdout
    return reset(pki)


def reset(pki: Pki) -> Pki:
    with AdminSession(pki) as session:
        for table in ("daily_summary", "job_watermarks"):
            session.execute(f"TRUNCATE {KEYSPACE}.{table}", timeout=60)
    return pki


def summary(pki: Pki) -> dict:
    with AdminSession(pki) as session:
        return summary_rows(session, KEYSPACE, TZ)


class Run(NamedTuple):
    returncode: int
    output: str  # spark-submit's stdout and stderr, with the job's lines
    processes_seen: int  # command lines of the job's processes seen while it ran (spark-submit's JVM, Python)
    secret_seen_in: list[str]  # the /proc/PID/cmdline or environ files the password was found in


def daily(pki: Pki, *, credentials: Path, password: str, **tls: str) -> Run:
    """analytics/submit daily (--since-last, local[2]) as the role of `credentials`, watching every process's
    command line and environment for `password` until it exits."""
    env = clean_env(TELEMETRY_CASSANDRA_HOSTS=HOST, TELEMETRY_CASSANDRA_KEYSPACE=KEYSPACE,
                    TELEMETRY_CASSANDRA_CREDENTIALS_FILE=str(credentials), **tls)
    job = subprocess.Popen([str(SUBMIT), "--master", "local[2]", "daily", "--tz", TZ], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen: set[int] = set()
    leaks: set[str] = set()
    secret = password.encode()

    def watch() -> None:
        while job.poll() is None:
            for pid in (p for p in os.listdir("/proc") if p.isdigit()):
                for part in ("cmdline", "environ"):
                    try:
                        data = Path("/proc", pid, part).read_bytes()
                    except OSError:  # gone, or not ours
                        continue
                    if secret in data:
                        leaks.add(f"/proc/{pid}/{part}")
                    if part == "cmdline" and str(ROOT / "analytics" / "daily.py").encode() in data:
                        seen.add(int(pid))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        output, _ = job.communicate(timeout=420)
    finally:
        if job.poll() is None:
            job.kill()
    watcher.join(timeout=30)
    return Run(job.returncode, output, len(seen), sorted(leaks))


def job_lines(run: Run) -> list[str]:
    return [line for line in run.output.splitlines() if line.startswith("daily: ")]


def assert_no_secret_shown(run: Run, password: str) -> None:
    assert run.processes_seen >= 1, "the watcher never saw the job's command line: it watched nothing"
    assert run.secret_seen_in == [], f"the password is readable in {run.secret_seen_in}"
    assert password not in run.output


def assert_refused(run: Run, pki: Pki) -> str:
    """A failed run: exit 1, the job's one `failed:` line (returned), no traceback, nothing written."""
    assert run.returncode == 1, run.output[-4000:]
    assert "Traceback" not in run.output, run.output[-4000:]
    failed = [line for line in job_lines(run) if line.startswith("daily: failed: ")]
    assert len(failed) == 1, run.output[-4000:]
    assert summary(pki) == {}
    return failed[0]


def assert_wrote_the_reference(run: Run, pki: Pki, tls_line: str) -> None:
    assert run.returncode == 0, run.output[-6000:]
    session_line = [line for line in job_lines(run) if "connector session open" in line]
    assert len(session_line) == 1 and session_line[0].endswith(
        f"; as user {ROLE}, TLS: node certificate verified against TELEMETRY_CASSANDRA_TLS_CA, host name checked, "
        f"{tls_line}"), run.output[-6000:]
    assert "no watermark yet: every day in source_days" in run.output
    actual = summary(pki)
    assert set(actual) == set(EXPECTED) and len(EXPECTED) == 3 * 2 * 4
    assert {day for _, day, _ in actual} == {date(2026, 3, 27), date(2026, 3, 28), date(2026, 3, 29)}
    assert_matches(actual, EXPECTED)
    assert f"done: {len(EXPECTED)} summary rows from {len(READINGS)} readings" in run.output


# --- the node proves itself; the job logs in ----------------------------------------------------------------------

def test_with_the_right_ca_the_analytics_role_writes_the_exact_summary(server_tls, pki):
    run = daily(pki, credentials=pki.credentials, password=pki.password, **pki.tls())
    assert_wrote_the_reference(run, server_tls, "no client certificate")
    assert_no_secret_shown(run, pki.password)


def test_without_the_ca_plain_cql_is_refused(server_tls, pki):
    run = daily(pki, credentials=pki.credentials, password=pki.password, **pki.tls(ca=None))
    failed = assert_refused(run, server_tls)
    assert failed.startswith(f"daily: failed: cannot connect to Cassandra at {HOST}:9042: "), failed
    assert failed.endswith("; if the node accepts only TLS, set TELEMETRY_CASSANDRA_TLS_CA (and _TLS_CERT/_TLS_KEY "
                           "if it wants a client certificate)"), failed
    assert_no_secret_shown(run, pki.password)


def test_with_a_wrong_ca_the_nodes_certificate_is_refused(server_tls, pki):
    run = daily(pki, credentials=pki.credentials, password=pki.password, **pki.tls(ca="wrong/ca.crt"))
    failed = assert_refused(run, server_tls)
    assert failed.startswith(f"daily: failed: cannot connect to Cassandra at {HOST}:9042: SunCertPathBuilderException: "
                             "unable to find valid certification path to requested target; the TLS handshake failed: "
                             "is TELEMETRY_CASSANDRA_TLS_CA the CA that signed the node's certificate"), failed
    assert_no_secret_shown(run, pki.password)


def test_a_wrong_password_is_refused_and_not_shown(server_tls, pki):
    wrong = read_credentials_file(str(pki.wrong_credentials))[1]
    run = daily(pki, credentials=pki.wrong_credentials, password=wrong, **pki.tls())
    failed = assert_refused(run, server_tls)
    assert failed == (f"daily: failed: Cassandra at {HOST}:9042 refused the login: Authentication error on node "
                      f"{HOST}/{HOST}:9042: server replied with 'Provided username {ROLE} and/or password are "
                      f"incorrect' to AuthResponse request; check the password in TELEMETRY_CASSANDRA_CREDENTIALS_FILE "
                      f"(or _PASSWORD): rotated?"), failed
    assert_no_secret_shown(run, wrong)


# --- the node also requires a client certificate signed by its CA -------------------------------------------------

def test_mutual_tls_without_a_client_certificate_is_refused(mutual_tls, pki):
    run = daily(pki, credentials=pki.credentials, password=pki.password, **pki.tls())
    failed = assert_refused(run, mutual_tls)
    assert failed.startswith(f"daily: failed: cannot connect to Cassandra at {HOST}:9042: "), failed
    assert "the TLS handshake failed" in failed, failed


def test_mutual_tls_with_the_client_keystore_writes_the_exact_summary(mutual_tls, pki):
    run = daily(pki, credentials=pki.credentials, password=pki.password, **pki.tls(client="client"))
    assert_wrote_the_reference(run, mutual_tls, "with a client certificate")
    assert_no_secret_shown(run, pki.password)
