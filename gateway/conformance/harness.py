"""The gateway conformance harness's tools: a board on a real pseudo-terminal, a gateway process under test
(any implementation: GATEWAY_COMMAND), its Prometheus metrics, and what landed in Cassandra.

The contract a gateway meets here is written in gateway/contract/: it takes `run --config FILE` with the keys of
config.md (example: gateway/contract/telemetry-gateway.example.toml), exposes the metrics of metrics.json on
[metrics] listen, and keeps its spool in the SQLite layout of spool.sql (table `frames`). Boards are simulated with
telemetry_board_sim (firmware/board_sim), never with a gateway's own code.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import tempfile
import threading
import time
import tty
import urllib.request
from dataclasses import dataclass
from datetime import date, timedelta, timezone, datetime
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from telemetry_board_sim import encode_frame

ROOT = Path(__file__).resolve().parents[2]
# Every gateway implementation by name: the conformance scenarios run once per gateway (conftest.py) and the
# benchmark puts them side by side (gateway/benchmark). GATEWAY_COMMAND names any other one.
GATEWAY_COMMANDS = {
    "python": [str(ROOT / ".venv" / "bin" / "telemetry-gateway")],
    "node": [str(ROOT / "gateway" / "node" / "bin" / "telemetry-gateway-node")],
}
DEFAULT_COMMAND = GATEWAY_COMMANDS["python"][0]


def gateway_command() -> list[str]:
    return shlex.split(os.environ.get("GATEWAY_COMMAND", DEFAULT_COMMAND))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Board:
    """A sensor board on a pseudo-terminal linked at `link` (the path the gateway opens, like /dev/ttyUSB0)."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        if link.is_symlink():
            link.unlink()
        link.symlink_to(os.ttyname(self._slave))

    def write(self, data: bytes, timeout: float = 20) -> None:
        """Writes like a board's UART, but fails instead of hanging when nobody has read the pty for a while."""
        view = memoryview(data)
        while view:
            _, writable, _ = select.select([], [self.master], [], timeout)
            if not writable:
                raise AssertionError(f"the pty buffer stayed full for {timeout} s: the gateway stopped reading")
            view = view[os.write(self.master, view):]

    def unplug(self) -> None:
        """The USB adapter goes away: the device node disappears and reads fail."""
        self.link.unlink()
        os.close(self._slave)
        os.close(self.master)


class Stream:
    """Numbered frames: metric n is a unique frame number, so every frame can be found (once) in Cassandra."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sent: list[int] = []
        self._seq = 0

    def frame(self, n: int, t: int | None = None, **values: float) -> bytes:
        line = encode_frame(self.source, self._seq, [("n", n), *values.items()], t=t)
        self._seq = (self._seq + 1) % 65536
        self.sent.append(n)
        return line


def port_entry(port: Path | dict) -> str:
    """A [serial] ports entry in TOML: a path, or a port table (string, whole-number and string-list values)."""
    if not isinstance(port, dict):
        return toml_value(str(port))
    return "{ " + ", ".join(f"{key} = {toml_value(value)}" for key, value in port.items()) + " }"


def toml_value(value: str | Path | int | list) -> str:
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

    def start(self, **env: str) -> None:
        """Starts the gateway (env: extra environment, e.g. TELEMETRY_CASSANDRA_PORT="1")."""
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen([*gateway_command(), "run", "--config", str(self.config_path)],
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


class PacedWriter(threading.Thread):
    """A board sending numbered frames at a steady rate from a thread of its own, so a test can kill things at
    random moments meanwhile. Even frame numbers carry an explicit t (a unique millisecond, so their rows' ts are
    known exactly); odd ones are stamped on receipt by the gateway. Each frame is recorded when its last byte is
    in the pty: (n, monotonic time, wall-clock ms)."""

    def __init__(self, board: Board, stream: Stream, rate: float, t_base_ms: int) -> None:
        super().__init__(daemon=True)
        self.board, self.stream, self.rate, self.t_base_ms = board, stream, rate, t_base_ms
        self.sent: list[tuple[int, float, int]] = []
        # n -> monotonic time its first byte went to the pty: a frame written while the pty was full goes in parts,
        # and a gateway killed in between has read its beginning.
        self.started: dict[int, float] = {}
        self.stop_event = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        n, start = 0, time.monotonic()
        try:
            while not self.stop_event.is_set():
                n += 1
                frame = self.frame(n)
                self.started[n] = time.monotonic()
                self.board.write(frame, timeout=300)
                self.sent.append((n, time.monotonic(), int(time.time() * 1000)))
                time.sleep(max(0.0, start + n / self.rate - time.monotonic()))
        except BaseException as error:  # reported by finish()
            self.error = error

    def frame(self, n: int) -> bytes:
        return self.stream.frame(n, t=self.t_base_ms + n if n % 2 == 0 else None, temp_in=n / 10, light=n % 100)

    def expected_values(self, n: int) -> dict[str, float]:
        return {"n": float(n), "temp_in": n / 10, "light": float(n % 100)}

    def finish(self) -> list[tuple[int, float, int]]:
        self.stop_event.set()
        self.join(timeout=330)
        assert not self.is_alive(), "the writer is still blocked on a full pty"
        if self.error is not None:
            raise self.error
        return self.sent


class TimedWriter(PacedWriter):
    """Every frame carries an explicit t (t_base_ms + its number: pick a base in the past hour), so each row's ts
    is known."""

    def frame(self, n: int) -> bytes:
        return self.stream.frame(n, t=self.t_base_ms + n, temp_in=n / 10, light=n % 100)


def assert_each_frame_once(stored: dict[int, list[tuple[int, dict[str, float]]]], sent: set[int],
                           writer: TimedWriter, who: str = "") -> None:
    """Every frame sent is stored (stored_frames) exactly once, under ts = its explicit t, with its values; and
    nothing else is."""
    who = f"{who}: " if who else ""
    missing = sorted(sent - stored.keys())
    assert not missing, f"{who}sent {len(sent)}, stored {len(stored)}, lost {len(missing)}: {missing[:50]}"
    assert stored.keys() == sent, f"{who}frames that were never sent: {sorted(stored.keys() - sent)[:20]}"
    for n in sorted(stored):
        assert len(stored[n]) == 1, f"{who}frame {n} stored {len(stored[n])} times: {stored[n]}"
        ts, values = stored[n][0]
        assert ts == writer.t_base_ms + n, f"{who}frame {n}: ts {ts}, sent with t={writer.t_base_ms + n}"
        assert values == writer.expected_values(n), f"{who}frame {n}: {values}"


def stored_frames(session, source: str, days) -> dict[int, list[tuple[int, dict[str, float]]]]:
    """{frame number: [(ts ms, {metric: value}), ...]} for every frame stored for source on those UTC days: a frame
    stored twice (under two timestamps) has two entries."""
    by_ts: dict[int, dict[str, float]] = {}
    for day in days:
        for row in session.execute("SELECT metric, ts, value FROM readings WHERE source = %s AND day = %s",
                                   [source, day]):
            ts = int(row.ts.replace(tzinfo=timezone.utc).timestamp() * 1000)
            by_ts.setdefault(ts, {})[row.metric] = row.value
    frames: dict[int, list[tuple[int, dict[str, float]]]] = {}
    for ts, values in by_ts.items():
        frames.setdefault(int(values.get("n", -1)), []).append((ts, values))
    return frames


def scrape_metrics(port: int) -> dict[tuple[str, tuple], float] | None:
    """A gateway's Prometheus samples as {(name, sorted labels): value}; None while the endpoint does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            text = response.read().decode()
    except OSError:
        return None
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def utc_days_around_now() -> list[date]:
    today = datetime.now(timezone.utc).date()
    return [today - timedelta(days=1), today, today + timedelta(days=1)]


def stored_numbers(session, source: str, days=None) -> list[int]:
    """Every value of metric n stored for source: a frame stored twice (e.g. under two timestamps) shows twice."""
    numbers = []
    for day in days or utc_days_around_now():
        rows = session.execute("SELECT value FROM readings WHERE source = %s AND day = %s AND metric = 'n'",
                               [source, day])
        numbers += [int(r.value) for r in rows]
    return numbers
