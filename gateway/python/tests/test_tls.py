"""TLS between the gateway and Cassandra, on a real node: node 3 (127.0.0.3, its own cluster and state under
.state/cassandra-tls) started by deploy/local/cassandra with client-to-node encryption, from throwaway certificates
made by deploy/tls/make-test-certs. First the node only proves who it is; then it also requires a client
certificate (a restart)."""

import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
from cassandra.policies import WhiteListRoundRobinPolicy
from telemetry_cassandra import connect_cluster

from deploy.tls.tls_node import TlsNode, clean_env, make_test_certs

pytestmark = pytest.mark.cassandra

ROOT = Path(__file__).resolve().parents[3]
LAUNCHER = ROOT / "deploy" / "local" / "cassandra"
MIGRATE = ROOT / "schema" / "migrate"
GATEWAY = shutil.which("telemetry-gateway", path=str(Path(sys.executable).parent))
NODE_GATEWAY = str(ROOT / "gateway" / "node" / "bin" / "telemetry-gateway-node")
NODE = os.environ.get("TELEMETRY_TLS_TEST_NODE", "3")  # another number runs this module beside someone's node 3
HOST = f"127.0.0.{NODE}"
STATE = ROOT / ".state" / "cassandra-tls"  # jars fetched once; node3's data is wiped at each start of the module
KEYSPACE = "telemetry_tls"


class Pki(NamedTuple):
    node_dir: Path  # make-test-certs' output, for CASSANDRA_CLIENT_TLS_DIR: ca.crt, node.crt/.key, client.crt/.key
    ca: Path
    client_cert: Path
    client_key: Path
    wrong_ca: Path  # another throwaway CA: it signed neither the node nor the client
    wrong_client_cert: Path  # a client certificate signed by the wrong CA
    wrong_client_key: Path


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    node_dir = make_test_certs(tmp_path_factory.mktemp("pki") / "node", "--nodes", "0", "--hosts", HOST)
    wrong_dir = node_dir / "wrong"
    return Pki(node_dir, node_dir / "ca.crt", node_dir / "client.crt", node_dir / "client.key", wrong_dir / "ca.crt",
               wrong_dir / "client.crt", wrong_dir / "client.key")


@pytest.fixture(scope="module")
def node(pki):
    """Node 3 with client TLS; `ensure` (re)starts it in the wanted client-auth mode, applying the schema once."""
    def migrate(tls_node: TlsNode) -> None:
        tls = ["--tls-ca", str(pki.ca)]
        if tls_node.require_client_auth:
            tls += ["--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key)]
        result = subprocess.run([str(MIGRATE), "--hosts", HOST, "--keyspace", KEYSPACE, *tls], env=clean_env(),
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr

    tls_node = TlsNode(NODE, STATE, pki.node_dir, "telemetry-tls-test", prepare=migrate, CASSANDRA_HEAP="512M")
    with tls_node.owned():
        yield tls_node


@pytest.fixture
def server_tls(node, pki):
    """The node verifies nobody: TLS proves the node to the client."""
    node.ensure(require_client_auth=False)
    return pki


@pytest.fixture
def mutual_tls(node, pki):
    """The node requires a client certificate signed by its CA."""
    node.ensure(require_client_auth=True)
    return pki


def gateway(tmp_path: Path, command: str, *args: str, ca: Path | None = None, cert: Path | None = None,
            key: Path | None = None, timeout: float = 60, executable: str = GATEWAY) -> subprocess.CompletedProcess:
    config = tmp_path / "gateway.toml"
    config.write_text("")  # every setting from the environment, nothing from /etc
    tls = {"TELEMETRY_CASSANDRA_TLS_CA": str(ca or ""), "TELEMETRY_CASSANDRA_TLS_CERT": str(cert or ""),
           "TELEMETRY_CASSANDRA_TLS_KEY": str(key or "")}
    env = clean_env(TELEMETRY_CASSANDRA_HOSTS=HOST, TELEMETRY_CASSANDRA_KEYSPACE=KEYSPACE,
                    TELEMETRY_METRICS_LISTEN="", TELEMETRY_SPOOL_PATH=str(tmp_path / "spool.sqlite"), **tls)
    return subprocess.run([executable, command, "--config", str(config), *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def check_ok(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"cassandra {HOST}:9042 (datacenter1): keyspace {KEYSPACE}, schema version" in result.stdout
    assert "check: OK" in result.stdout


def check_failed(result: subprocess.CompletedProcess) -> str:
    """The one problem line of a failed check."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    problems = [line for line in result.stderr.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 1, result.stderr
    assert problems[0].startswith(f"problem: cannot reach Cassandra at {HOST}:9042: NoHostAvailable")
    return problems[0]


# --- the node proves itself; any client may connect over TLS -----------------------------------------------------

def test_check_passes_with_the_ca_that_signed_the_node(server_tls, tmp_path):
    check_ok(gateway(tmp_path, "check", ca=server_tls.ca))


def test_the_node_refuses_plain_cql(server_tls, tmp_path):
    # Without this, the test above would also pass against a node without TLS.
    problem = check_failed(gateway(tmp_path, "check"))
    assert "if the node accepts only TLS, set tls_ca" in problem


def test_check_with_a_wrong_ca_fails_certificate_verification(server_tls, tmp_path):
    problem = check_failed(gateway(tmp_path, "check", ca=server_tls.wrong_ca))
    assert "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed" in problem


# --- the node also requires a client certificate signed by its CA ---------------------------------------------------

def assert_refused_by_the_node(problem: str, alert: str) -> None:
    """With TLS 1.3 the client's side of the handshake is done before the node checks the client's certificate; the
    node then sends an alert and closes. Whether the driver reads that alert or first writes into the closed
    connection is a race (about half each here): the failure is the alert or an EOF, both at the TLS layer."""
    assert alert in problem or "SSLEOFError(8, 'EOF occurred in violation of protocol" in problem, problem
    assert "does the node require a client certificate (tls_cert/tls_key)" in problem  # whichever way it failed


def test_the_node_gateway_verifies_the_nodes_certificate(server_tls, tmp_path):
    # cassandra-driver (Node) does not verify certificates unless told to (rejectUnauthorized): the right CA
    # passes, another CA's is refused, and plain CQL to a TLS-only node fails with the hint.
    check_ok(gateway(tmp_path, "check", ca=server_tls.ca, executable=NODE_GATEWAY))
    wrong = gateway(tmp_path, "check", ca=server_tls.wrong_ca, executable=NODE_GATEWAY)
    assert wrong.returncode == 1 and "problem: cannot reach Cassandra at" in wrong.stderr, wrong.stderr
    assert "certificate" in wrong.stderr and "Traceback" not in wrong.stderr, wrong.stderr
    plain = gateway(tmp_path, "check", executable=NODE_GATEWAY)
    assert plain.returncode == 1 and "problem: cannot reach Cassandra at" in plain.stderr, plain.stderr


def test_client_auth_without_a_client_certificate_fails(mutual_tls, tmp_path):
    problem = check_failed(gateway(tmp_path, "check", ca=mutual_tls.ca))
    assert_refused_by_the_node(problem, "SSLError(1, '[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED] tlsv13 alert "
                                        "certificate required")


def test_client_auth_rejects_a_certificate_from_another_ca(mutual_tls, tmp_path):
    problem = check_failed(gateway(tmp_path, "check", ca=mutual_tls.ca, cert=mutual_tls.wrong_client_cert,
                                   key=mutual_tls.wrong_client_key))
    # Cassandra (netty) answers an untrusted client certificate with a bare "internal error" alert.
    assert_refused_by_the_node(problem, "SSLError(1, '[SSL: TLSV1_ALERT_INTERNAL_ERROR] tlsv1 alert internal error")


def test_client_auth_check_passes_with_the_client_certificate(mutual_tls, tmp_path):
    check_ok(gateway(tmp_path, "check", ca=mutual_tls.ca, cert=mutual_tls.client_cert, key=mutual_tls.client_key))
    status = subprocess.run([str(MIGRATE), "--hosts", HOST, "--keyspace", KEYSPACE, "--status",
                             "--tls-ca", str(mutual_tls.ca), "--tls-cert", str(mutual_tls.client_cert),
                             "--tls-key", str(mutual_tls.client_key)],
                            env=clean_env(), capture_output=True, text=True, timeout=120)
    assert status.returncode == 0 and f"keyspace {KEYSPACE}: schema version" in status.stdout, status.stderr
    assert ", 0 pending" in status.stdout


def test_launcher_status_and_cqlsh_use_the_nodes_tls(mutual_tls, node):
    # Both find the CA and client certificate in the node's conf/tls; no TLS settings needed in the environment.
    env = clean_env(CASSANDRA_STATE_DIR=str(STATE))
    status = subprocess.run([str(LAUNCHER), "--node", NODE, "status"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert status.returncode == 0 and f"CQL at {HOST}:9042" in status.stdout, status.stdout + status.stderr
    cqlsh = subprocess.run([str(LAUNCHER), "--node", NODE, "cqlsh", "-e", "SELECT release_version FROM system.local"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert cqlsh.returncode == 0 and "5.0." in cqlsh.stdout, cqlsh.stdout + cqlsh.stderr


def frame_values(path: Path) -> list[tuple[str, str, float]]:
    """(source, metric, value) of every frame in a board-sim file, read from the text: `$T1,SRC,SEQ,k=v,...*CRC`."""
    values = []
    for line in path.read_text().splitlines():
        fields = line[1:line.rindex("*")].split(",")
        assert fields[0] == "T1", line
        for pair in fields[3:]:
            metric, _, value = pair.partition("=")
            values.append((fields[1], metric, float(value)))
    return values


@pytest.mark.parametrize("executable", [GATEWAY, NODE_GATEWAY], ids=["python", "node"])
def test_run_over_mutual_tls_lands_the_rows(mutual_tls, tmp_path, executable):
    frames = tmp_path / "frames.txt"
    board = subprocess.run([sys.executable, "-m", "telemetry_board_sim", "--output", str(frames), "--sources", "2",
                            "--rate", "0", "--count", "20"], capture_output=True, text=True, timeout=60)
    assert board.returncode == 0, board.stderr
    expected = frame_values(frames)
    assert len(expected) == 80 and {source for source, _, _ in expected} == {"sim1", "sim2"}

    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([HOST]), request_timeout=30)
    cluster = connect_cluster([HOST], tls_ca=str(mutual_tls.ca), tls_cert=str(mutual_tls.client_cert),
                              tls_key=str(mutual_tls.client_key), execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    try:
        session = cluster.connect(KEYSPACE)
        for table in ("readings", "latest"):  # each gateway's run starts on empty tables
            session.execute(f"TRUNCATE {table}", timeout=60)
    finally:
        cluster.shutdown()
    run = gateway(tmp_path, "run", "--input", str(frames), "--exit-when-drained", ca=mutual_tls.ca,
                  cert=mutual_tls.client_cert, key=mutual_tls.client_key, timeout=120, executable=executable)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log
    assert f"event=cassandra_connected keyspace={KEYSPACE}" in log and "event=inputs_done_and_spool_drained" in log
    assert "Traceback" not in log

    cluster = connect_cluster([HOST], tls_ca=str(mutual_tls.ca), tls_cert=str(mutual_tls.client_cert),
                              tls_key=str(mutual_tls.client_key), execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    try:
        session = cluster.connect(KEYSPACE)
        rows = [(r.source, r.metric, r.value) for r in session.execute("SELECT source, metric, value FROM readings")]
        latest = {(r.source, r.metric): r.value for r in session.execute("SELECT source, metric, value FROM latest")}
    finally:
        cluster.shutdown()
    assert collections.Counter(rows) == collections.Counter(expected)  # every value once, none lost or merged
    assert latest == {(source, metric): value for source, metric, value in expected}  # the last frame's values
