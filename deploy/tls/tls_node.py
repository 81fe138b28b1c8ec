"""For test modules: a real Cassandra node with client-to-node TLS, started by deploy/local/cassandra under its own
node number and state folder with certificates from deploy/tls/make-test-certs, and (re)started in the client-auth
mode a test asks for (gateway/python/tests/test_tls.py, analytics/tests/test_jobs_tls_auth.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "deploy" / "local" / "cassandra"
MAKE_TEST_CERTS = ROOT / "deploy" / "tls" / "make-test-certs"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anybody's TELEMETRY_* or CASSANDRA_* settings, plus extra."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEMETRY_", "CASSANDRA_"))}
    return {**env, **extra}


def make_test_certs(out: Path, *args: str) -> Path:
    """deploy/tls/make-test-certs OUT ARGS; returns OUT."""
    made = subprocess.run([str(MAKE_TEST_CERTS), str(out), *args], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stdout + made.stderr
    return out


class TlsNode:
    """Node N (127.0.0.N) of its own one-node cluster, TLS files from tls_dir; env adds launcher settings
    (CASSANDRA_HEAP, CASSANDRA_AUTH, ...). `prepare(node)` runs once, after the first start."""

    def __init__(self, node: str, state: Path, tls_dir: Path, cluster_name: str,
                 prepare: Callable[[TlsNode], None] = lambda _node: None, **env: str) -> None:
        self.node, self.host, self.state, self.tls_dir = node, f"127.0.0.{node}", state, tls_dir
        self.env = {"CASSANDRA_STATE_DIR": str(state), "CASSANDRA_SEEDS": self.host,
                    "CASSANDRA_CLUSTER_NAME": cluster_name, "CASSANDRA_CLIENT_TLS_DIR": str(tls_dir), **env}
        self.prepare = prepare
        self.require_client_auth: bool | None = None  # None: not started by us
        self.prepared = False

    def launcher(self, *args: str, require_client_auth: bool = False) -> subprocess.CompletedProcess:
        env = clean_env(**self.env, CASSANDRA_CLIENT_TLS_REQUIRE_CLIENT_AUTH=str(require_client_auth).lower())
        return subprocess.run([str(LAUNCHER), "--node", self.node, *args], env=env, capture_output=True, text=True,
                              timeout=300)

    @contextmanager
    def owned(self) -> Iterator[TlsNode]:
        """For a module fixture: a node of ours left by an interrupted run (it would have other certificates) is
        stopped and its data dropped first; the node is killed at the end (the next start drops its data: nothing
        to drain)."""
        self.launcher("stop")
        shutil.rmtree(self.state / f"node{self.node}", ignore_errors=True)
        try:
            yield self
        finally:
            self.kill()

    def ensure(self, require_client_auth: bool) -> subprocess.CompletedProcess | None:
        """(Re)starts the node unless it runs in that mode already; the launcher's output when it started."""
        if self.require_client_auth == require_client_auth:
            return None
        if self.require_client_auth is not None:
            self.stop()
        begun = time.monotonic()
        started = self.launcher("start", require_client_auth=require_client_auth)
        assert started.returncode == 0, f"node {self.node} with TLS did not start:\n{started.stdout}\n{started.stderr}"
        assert f"up: CQL at {self.host}:9042" in started.stdout
        print(f"node {self.node} (require_client_auth={require_client_auth}) up in {time.monotonic() - begun:.1f} s")
        self.require_client_auth = require_client_auth
        if not self.prepared:
            self.prepare(self)
            self.prepared = True
        return started

    def kill(self) -> None:
        killed = self.launcher("kill")
        self.require_client_auth = None
        assert killed.returncode == 0, killed.stdout + killed.stderr

    def stop(self) -> None:
        stopped = self.launcher("stop")
        if stopped.returncode != 0:  # still draining after the launcher's timeout: it is ours, end it
            pidfile = self.state / f"node{self.node}" / "cassandra.pid"
            if pidfile.exists():
                try:
                    os.kill(int(pidfile.read_text()), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.require_client_auth = None
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
