"""A gateway process under test (any implementation: GATEWAY_COMMAND): its config file written from a scenario's
settings, started and stopped, its metrics read, and a read-only look at its spool.

The contract a gateway meets here is written in gateway/contract/: it takes `run --config FILE` with the keys of
config.md (example: gateway/contract/telemetry-gateway.example.toml), exposes the metrics of metrics.json on
[metrics] listen, and keeps its spool in the SQLite layout of spool.sql (table `frames`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .commands import gateway_command
from .metrics import scrape_metrics
from .waits import free_port, wait_for


def port_entry(port: Path | dict) -> str:
    """A [serial] ports entry in TOML: a path, or a port table (string, whole-number, boolean and string-list
    values)."""
    if not isinstance(port, dict):
        return toml_value(str(port))
    return "{ " + ", ".join(f"{key} = {toml_value(value)}" for key, value in port.items()) + " }"


def toml_value(value: str | Path | int | list) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return json.dumps(str(value))  # a JSON string is a TOML basic string


@dataclass
class GatewayUnderTest:
    config_path: Path
    spool_path: Path
    metrics_port: int
    ports: tuple[Path, ...] = ()
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    @classmethod
    def configure(cls, tmp: Path, ports: list[Path | dict], keyspace: str, host: str | list[str],
                  fsync: str | None = None, extra: str = "", spool: Path | None = None,
                  consistency: str = "LOCAL_ONE", fsync_interval_ms: int | None = None) -> "GatewayUnderTest":
        """ports: paths, or port tables such as {"path": link, "baud": 9600, "format": "csv", ...}; host: one
        address or the contact points of a cluster. fsync (and fsync_interval_ms) unset: the gateway's default,
        what users get; a scenario about another policy names it."""
        spool = spool or tmp / "spool.sqlite"
        metrics_port = free_port()
        config = tmp / "gateway.toml"
        config.write_text(f"""
[serial]
ports = [{", ".join(map(port_entry, ports))}]
reopen_max_s = 0.5

[spool]
path = "{spool}"
{"" if fsync is None else f'fsync = "{fsync}"'}
{"" if fsync_interval_ms is None else f"fsync_interval_ms = {fsync_interval_ms}"}

[cassandra]
hosts = {toml_value([host] if isinstance(host, str) else list(host))}
keyspace = "{keyspace}"
consistency = "{consistency}"
retry_max_s = 1.0

[metrics]
listen = "127.0.0.1:{metrics_port}"

[log]
level = "info"
{extra}
""")
        return cls(config, spool, metrics_port, ports=tuple(p["path"] if isinstance(p, dict) else p for p in ports),
                   log_path=tmp / "gateway.log")

    def start(self, command: list[str] | None = None, **env: str) -> None:
        """Starts the gateway (env: extra environment, e.g. TELEMETRY_CASSANDRA_PORT="1"); command: the gateway's
        (default: GATEWAY_COMMAND's), for tests starting several gateways at once from threads."""
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen([*(command or gateway_command()), "run", "--config", str(self.config_path)],
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        env={**os.environ, **env})
        wait_for(lambda: self.metrics_or_none() is not None, 30, "the gateway's metrics endpoint")
        # Ready to read only once every port is open: like a real serial driver, a port keeps nothing that was
        # sent while it was closed.
        for port in self.ports:
            wait_for(lambda: self.metric("telemetry_gateway_input_up", input=str(port)) == 1, 30, f"{port} open")

    def wait_holding(self, timeout: float = 30) -> None:
        """Until the default policy holds frames (Cassandra connected): frames read before are committed at once."""
        wait_for(lambda: self.metric("telemetry_gateway_spool_holding") == 1, timeout, "holding (Cassandra connected)")

    def metrics_or_none(self) -> dict[tuple[str, tuple], float] | None:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"gateway exited with {self.process.returncode}:\n{self.log()}")
        return scrape_metrics(self.metrics_port)

    def metric(self, name: str, **labels: str) -> float:
        return (self.metrics_or_none() or {}).get((name, tuple(sorted(labels.items()))), 0.0)

    def status(self) -> dict:
        """Its /status.json (gateway/contract/status.md)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/status.json", timeout=5) as response:
            assert response.headers["Content-Type"] == "application/json"
            return json.loads(response.read())

    def stop(self, timeout: float = 30) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def _read_spool(self) -> sqlite3.Connection:
        """A read-only look at the spool that leaves its files as they are: a read-only connection to a WAL spool
        whose gateway is not running would leave a -wal file behind, which the next gateway takes for a crash. So
        a stopped gateway's spool is read from a copy (with its WAL, if a crash left one)."""
        if self.process is not None and self.process.poll() is None:
            return sqlite3.connect(f"file:{self.spool_path}?mode=ro", uri=True)
        copy = Path(tempfile.mkdtemp()) / "spool.sqlite"
        for suffix in ("", "-wal"):
            if Path(f"{self.spool_path}{suffix}").exists():
                shutil.copyfile(f"{self.spool_path}{suffix}", f"{copy}{suffix}")
        return sqlite3.connect(copy)

    def spool_depth(self) -> int:
        """Frames in the spool file: what is not yet acknowledged by Cassandra."""
        db = self._read_spool()
        try:
            return db.execute("SELECT count(*) FROM frames").fetchone()[0]
        finally:
            db.close()

    def stored_seq(self, source: str) -> int | None:
        """The seq the spool's source_seqs holds for source: what a restart judges the source's next frame against."""
        db = self._read_spool()
        try:
            row = db.execute("SELECT seq FROM source_seqs WHERE source = ?", (source,)).fetchone()
            return None if row is None else row[0]
        finally:
            db.close()

    def spooled_numbers(self) -> set[int]:
        """Frame numbers (metric n) in the spool file: what 'reached the spool'."""
        return {n for n, _stamps in self.spooled_rows()}

    def spooled_rows(self) -> list[tuple[int, tuple[int, int]]]:
        """(frame number (metric n), (ts_ms, received_ms)) of every frame in the spool file, in id order. The spool's
        format (format 2: metric names as comma-separated text, values as big-endian doubles) is shared by every
        gateway, so one can take over another's spool."""
        db = self._read_spool()
        try:
            rows = []
            for metrics, vals, ts_ms, received_ms in db.execute(
                    "SELECT metrics, vals, ts_ms, received_ms FROM frames ORDER BY id"):
                names = metrics.split(",")
                n = int(dict(zip(names, struct.unpack(f">{len(names)}d", vals)))["n"])
                rows.append((n, (ts_ms, received_ms)))
            return rows
        finally:
            db.close()
