"""One gateway process under test (any implementation: gateway_commands): its rows written (from /metrics), CPU
and peak memory, sampled while it runs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Callable

from telemetry_conformance.process_usage import cpu_seconds, peak_rss_kb

from bench_settings import KEYSPACE, WORK
from gateway_commands import Gateway
from prometheus_samples import metrics

ROWS_WRITTEN = "telemetry_gateway_rows_written_total"


class GatewayRun:
    """`<gateway's command> run` on the bench keyspace with its metrics on port; its log in WORK."""

    def __init__(self, gateway: Gateway, args: list[str], port: int, env: dict | None = None) -> None:
        self.port = port
        self.log = WORK / f"gateway-{gateway.name}-{port}.log"
        self.process = subprocess.Popen([*gateway.command, "run", "--keyspace", KEYSPACE, "--metrics-listen",
                                         f"127.0.0.1:{port}", *args], stdout=subprocess.DEVNULL,
                                        stderr=open(self.log, "w"),
                                        env={**os.environ, **(env or {})})
        self.peak_rss_kb = 0
        self.cpu_s = 0.0
        self.samples: list[tuple[float, float]] = []  # (time, rows written)

    def sample(self) -> dict[str, float]:
        try:
            self.peak_rss_kb = max(self.peak_rss_kb, peak_rss_kb(self.process.pid))
            self.cpu_s = cpu_seconds(self.process.pid)
        except (OSError, IndexError):  # the process has just ended
            pass
        m = metrics(self.port)
        if m:
            self.samples.append((time.monotonic(), m.get(ROWS_WRITTEN, 0)))
        return m

    def watch(self, until: Callable[[dict[str, float]], bool], timeout: float = 900) -> dict[str, float]:
        """Samples every 0.25 s until until(metrics) holds or the process ends; returns the last metrics. Raises
        SystemExit, with the process ended, when it failed (a non-zero exit) or did not get there in time."""
        deadline = time.monotonic() + timeout
        last = {}
        while time.monotonic() < deadline:
            last = self.sample() or last
            if until(last):
                return last
            if self.process.poll() is not None:
                if self.process.returncode != 0:
                    raise SystemExit(f"bench: the gateway exited with {self.process.returncode}; see {self.log}")
                return last
            time.sleep(0.25)
        self.stop()
        raise SystemExit(f"bench: gave up after {timeout} s; see {self.log}")

    def rate(self) -> float:
        """Rows/s between the first and the last change of rows_written (start-up and idle tail excluded)."""
        moving = [(t, r) for (t, r), (_, prev) in zip(self.samples[1:], self.samples) if r != prev]
        first = next(((t, r) for t, r in self.samples if r > 0), None)
        if not moving or first is None:
            return 0.0
        (t0, _), (t1, r1) = first, moving[-1]
        before = max((r for t, r in self.samples if t < t0), default=0.0)
        return (r1 - before) / max(t1 - t0 + 0.25, 1e-9)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
