"""gateway/bench: throughput, latency, memory and backlog drain of the Python gateway against the local Cassandra,
side by side with single-row async inserts from the same driver and with latte (native, single-row), in one run.

Prints figures and ratios; asserts nothing (targets are judged by a person reading the figures).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from cassandra.cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gateway" / "conformance"))
from harness import scrape_metrics  # noqa: E402  (one Prometheus reader for the tests and the benchmark)

WORK = ROOT / ".state" / "bench"
GATEWAY = [str(ROOT / ".venv" / "bin" / "telemetry-gateway")]
KEYSPACE = "gateway_bench"
LATTE = ROOT / ".state" / "latte" / "bin" / "latte"
LATTE_VERSION = "0.29.0"
STEADY_AFTER_S = 3  # the latency run's start-up, left out of its figures
ROWS_PER_FRAME = 4  # the simulator's boards send 4 metrics a frame


def sh(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], check=True, **kw)


def metrics(port: int) -> dict[str, float]:
    """Unlabelled samples by name, labelled ones as name{k=v,...}."""
    samples = scrape_metrics(port) or {}
    return {name + ("{" + ",".join(f"{k}={v}" for k, v in labels) + "}" if labels else ""): value
            for (name, labels), value in samples.items()}


def quantile(samples: dict[str, float], name: str, q: float, since: dict[str, float] | None = None) -> float:
    """q-quantile from a Prometheus histogram's cumulative buckets (linear within the bucket); with since, of the
    observations made after that earlier scrape only (as Prometheus's histogram_quantile over an increase)."""
    since = since or {}
    buckets = sorted((float(k.split("le=")[1].rstrip("}")), v - since.get(k, 0.0)) for k, v in samples.items()
                     if k.startswith(name + "_bucket{"))
    total = buckets[-1][1]
    target, lower, below = q * total, 0.0, 0.0
    for upper, count in buckets:
        if count >= target:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (target - below) / max(count - below, 1e-9)
        lower, below = upper, count
    return lower


def stat_cpu_seconds(stat: Path) -> float:
    """User + system CPU time so far from a /proc .../stat file (a process's or one of its threads')."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    return stat_cpu_seconds(Path(f"/proc/{pid}/stat"))


def jit_cpu_seconds(pid: int) -> float:
    """CPU time of a JVM's JIT compiler threads so far (the threads named "C1/C2 CompilerThread...")."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if " CompilerThre" in (task / "comm").read_text():
                total += stat_cpu_seconds(task / "stat")
        except OSError:  # the thread ended meanwhile
            pass
    return total


def cassandra_pid() -> int:
    return int((ROOT / ".state" / "cassandra" / "node1" / "cassandra.pid").read_text())


class Run:
    """One gateway process; samples its rows_written and peak RSS while it runs."""

    def __init__(self, args: list[str], port: int, env: dict | None = None) -> None:
        self.port = port
        self.log = WORK / f"gateway-{port}.log"
        self.process = subprocess.Popen([*GATEWAY, "run", "--keyspace", KEYSPACE, "--metrics-listen",
                                         f"127.0.0.1:{port}", *args], stdout=subprocess.DEVNULL,
                                        stderr=open(self.log, "w"),
                                        env={**os.environ, **(env or {})})
        self.peak_rss_kb = 0
        self.cpu_s = 0.0
        self.samples: list[tuple[float, float]] = []  # (time, rows written)

    def sample(self) -> dict[str, float]:
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
            self.peak_rss_kb = max(self.peak_rss_kb, int(status.split("VmHWM:")[1].split()[0]))
            self.cpu_s = cpu_seconds(self.process.pid)
        except (OSError, IndexError):
            pass
        m = metrics(self.port)
        if m:
            self.samples.append((time.monotonic(), m.get("telemetry_gateway_rows_written_total", 0)))
        return m

    def watch(self, until, timeout: float = 900) -> dict[str, float]:
        deadline = time.monotonic() + timeout
        last = {}
        while time.monotonic() < deadline:
            last = self.sample() or last
            if until(last) or self.process.poll() is not None:
                return last
            time.sleep(0.25)
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
            self.process.wait(timeout=60)


def fresh_keyspace() -> None:
    cluster = Cluster(["127.0.0.1"], protocol_version=5)
    session = cluster.connect()
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}", timeout=120)
    cluster.shutdown()
    sh(ROOT / "schema" / "migrate", "--keyspace", KEYSPACE, stdout=subprocess.DEVNULL)
    cluster = Cluster(["127.0.0.1"], protocol_version=5)
    session = cluster.connect(KEYSPACE)
    session.execute("CREATE TABLE IF NOT EXISTS latte_readings (source text, day bigint, metric text, ts bigint, "
                    "value double, PRIMARY KEY ((source, day), metric, ts))")
    cluster.shutdown()


def cpu_reference_s() -> float:
    """Seconds for a fixed pure-Python loop: this VM's speed drifts by a third over an hour (other tenants), so
    figures from two runs compare only together with this."""
    started = time.perf_counter()
    sum(range(30_000_000))
    return time.perf_counter() - started


def wakeup_reference_us(round_trips: int = 20_000) -> float:
    """Microseconds for a one-byte pipe round trip between two processes: the cost of the wake-ups that every
    frame takes between threads and processes. It tracks this VM's bad hours (steal, busy neighbours) that the
    CPU loop misses: latte fell from 64k to 21k rows/s while the loop stayed within 0.44-0.58 s."""
    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    pid = os.fork()
    if pid == 0:
        for _ in range(round_trips):
            os.read(to_child, 1)
            os.write(to_parent, b"x")
        os._exit(0)
    started = time.perf_counter()
    for _ in range(round_trips):
        os.write(from_parent, b"x")
        os.read(from_child, 1)
    elapsed = time.perf_counter() - started
    os.waitpid(pid, 0)
    for fd in (to_child, from_parent, from_child, to_parent):
        os.close(fd)
    return elapsed / round_trips * 1e6


def machine_state() -> str:
    return f"CPU loop (sum of range(30M)) {cpu_reference_s():.2f} s, pipe round trip {wakeup_reference_us():.0f} µs"


WARMUP_ROUNDS_MAX = 12
JIT_SETTLED = 0.10  # share of Cassandra's CPU spent by its JIT compilers in a round, below which it counts as warm


def warm_up(args) -> list[tuple[float, float, float]]:
    """Replays args.warmup_frames, unmeasured, until Cassandra's JIT compilers are nearly idle. After a restart
    they took 41-55% of its CPU over the first 2M rows here, then 16, 16 and 10% over the next three 400k-row
    rounds. Cassandra's CPU per row is no signal of that, as it also falls with the rate (paced batches: 16.5 µs a
    row at 40k rows/s, 7.0 at 160k). Returns each round's (rows/s, Cassandra CPU µs per row, JIT share of it)."""
    warmup_file = WORK / f"frames-{args.warmup_frames}-{args.sources}.txt"
    simulate_file(warmup_file, args.warmup_frames, args.sources)
    rounds: list[tuple[float, float, float]] = []
    while len(rounds) < WARMUP_ROUNDS_MAX:
        clean_slate()
        pid = cassandra_pid()
        cpu, jit = cpu_seconds(pid), jit_cpu_seconds(pid)
        rate = bench_file(warmup_file, args.warmup_frames).rate()
        cpu, jit = cpu_seconds(pid) - cpu, jit_cpu_seconds(pid) - jit
        rounds.append((rate, cpu / (args.warmup_frames * ROWS_PER_FRAME) * 1e6, jit / max(cpu, 1e-9)))
        if rounds[-1][2] < JIT_SETTLED:
            break
    return rounds


def warm_up_line(rounds: list[tuple[float, float, float]], rows: int) -> str:
    return (f"warm-up, {len(rounds)} × {rows:,} rows (not measured; until Cassandra's JIT compilers use < "
            f"{JIT_SETTLED:.0%} of its CPU): "
            + ", ".join(f"{rate:,.0f} rows/s at {cpu:.1f} µs ({jit:.0%} JIT)" for rate, cpu, jit in rounds))


def clean_slate() -> float:
    """Empty the gateway's tables and wait until Cassandra is idle (flushes and compactions of the previous phase
    done), so each phase measures the gateway at that load, not the previous phase's background work. Returns
    the seconds waited."""
    cluster = Cluster(["127.0.0.1"], protocol_version=5)
    session = cluster.connect(KEYSPACE)
    for table in ("readings", "latest", "source_days", "day_changes"):
        session.execute(f"TRUNCATE {table}", timeout=120)
    cluster.shutdown()
    started = time.monotonic()
    while time.monotonic() - started < 120:
        before = cpu_seconds(cassandra_pid())
        time.sleep(1)
        if cpu_seconds(cassandra_pid()) - before < 0.15:
            break
    return time.monotonic() - started


def simulate_file(path: Path, frames: int, sources: int) -> None:
    if not path.exists() or path.stat().st_size == 0:
        sh(*GATEWAY, "simulate", "--output", path, "--sources", sources, "--rate", 0, "--count", frames,
           stderr=subprocess.DEVNULL)


def bench_file(frames_file: Path, frames: int, env: dict | None = None) -> Run:
    spool = WORK / "file.sqlite"
    for p in WORK.glob("file.sqlite*"):
        p.unlink()
    run = Run(["--input", str(frames_file), "--exit-when-drained", "--spool", str(spool)], 9301, env)
    run.watch(lambda m: False)
    return run


def bench_pty(frames: int, sources: int, rate: float, port: int, steady_after_s: float = 0.0,
              env: dict | None = None) -> tuple[Run, dict, dict]:
    """Returns the run, its last metrics, and its metrics steady_after_s seconds after the first rows were
    written (to leave the start-up, when frames wait for the connection to Cassandra, out of the latency)."""
    link = WORK / f"tty-{port}"
    for p in WORK.glob(f"pty-{port}.sqlite*"):
        p.unlink()
    board = subprocess.Popen([*GATEWAY, "simulate", "--pty", str(link), "--sources", str(sources), "--rate",
                              str(rate), "--count", str(frames)], stderr=subprocess.DEVNULL)
    while not link.exists():
        time.sleep(0.05)
    run = Run(["--port", str(link), "--spool", str(WORK / f"pty-{port}.sqlite")], port, env)
    # Done when the board has finished and nothing is left to write (the first lines, written before the
    # gateway opened the port, are flushed by the open, as on a real serial line).
    first_rows = run.watch(lambda m: m.get("telemetry_gateway_rows_written_total", 0) > 0)
    steady_at = time.monotonic() + steady_after_s
    steady = run.watch(lambda m: time.monotonic() >= steady_at) if steady_after_s else first_rows
    last = run.watch(lambda m: board.poll() is not None and m.get("telemetry_gateway_spool_frames", 1) == 0
                     and m.get("telemetry_gateway_requests_in_flight", 1) == 0
                     and m.get("telemetry_gateway_frames_written_total", 0) > 0)
    run.stop()
    board.wait()
    return run, last, steady


def bench_backlog(frames_file: Path, frames: int) -> tuple[float, float]:
    spool = WORK / "backlog.sqlite"
    for p in WORK.glob("backlog.sqlite*"):
        p.unlink()
    # Fill the spool while Cassandra is unreachable (a closed port), as during an outage.
    fill = Run(["--input", str(frames_file), "--spool", str(spool)], 9303, env={"TELEMETRY_CASSANDRA_PORT": "1"})
    started = time.monotonic()
    fill.watch(lambda m: m.get("telemetry_gateway_spool_frames", 0) >= frames)
    fill_s = time.monotonic() - started
    fill.stop()
    drain = Run(["--input", "/dev/null", "--exit-when-drained", "--spool", str(spool)], 9304)
    drain.watch(lambda m: False)
    return drain.rate(), frames / fill_s


def open_fifo_writer(fifo: Path, gateway_log: Path, timeout_s: float = 60) -> int:
    """The FIFO's write end, once the gateway has opened it for reading (a plain open would wait forever if the
    gateway never did)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while nobody reads it
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: the gateway never opened {fifo}; see {gateway_log}")
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def bench_paced(rows_per_s: float, seconds: int, sources: int) -> tuple[Run, list[float], float, float]:
    """Frames offered at a fixed rate for `seconds` (through a FIFO, as boards send them, not as fast as a file
    can be read): whether the gateway keeps up. A gateway that cannot would end with the shortfall of every second
    in its spool. Returns the run, the rows/s written in each 10 s of the input, the most frames waiting in the
    spool, and how long after the input ended the gateway had written every row and exited (--exit-when-drained:
    an upper bound, with its 0.2 s drain check, its shutdown and this bench's sampling in it)."""
    frames = int(rows_per_s / ROWS_PER_FRAME * seconds)
    frames_file = WORK / f"frames-{frames}-{sources}.txt"
    simulate_file(frames_file, frames, sources)
    lines = frames_file.read_bytes().splitlines(keepends=True)
    fifo = WORK / "paced.fifo"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    for p in WORK.glob("paced.sqlite*"):
        p.unlink()
    run = Run(["--input", str(fifo), "--exit-when-drained", "--spool", str(WORK / "paced.sqlite")], 9306)
    offered: list[float] = []  # when the input started and ended

    def offer() -> None:
        with open(open_fifo_writer(fifo, run.log), "wb") as out:
            offered.append(time.monotonic())
            sent = 0
            while sent < frames:
                due = min(frames, int((time.monotonic() - offered[0]) * rows_per_s / ROWS_PER_FRAME))
                out.write(b"".join(lines[sent:due]))
                out.flush()
                sent = due
                time.sleep(0.005)
        offered.append(time.monotonic())

    offering = threading.Thread(target=offer)
    offering.start()
    samples: list[tuple[float, float, float]] = []  # (time, frames in the spool, rows written)
    run.watch(lambda m: samples.append((time.monotonic(), m.get("telemetry_gateway_spool_frames", 0),
                                        m.get("telemetry_gateway_rows_written_total", 0))) and False)
    exited = time.monotonic()
    offering.join()
    fifo.unlink()
    if run.process.returncode != 0:
        raise SystemExit(f"bench: the paced gateway exited with {run.process.returncode}; see {run.log}")
    started, ended = offered
    per_10s, window = [], None  # rows/s over each whole 10 s of the input
    for t, _, rows in samples:
        if started <= t <= ended:
            if window is None:
                window = (t, rows)
            elif t - window[0] >= 10:
                per_10s.append((rows - window[1]) / (t - window[0]))
                window = (t, rows)
    return run, per_10s, max(depth for _, depth, _ in samples), exited - ended


def batched_reference(rows: int, batch_rows: int, in_flight: int) -> tuple[float, float]:
    """The ceiling for any client of this driver here: the readings insert in single-partition UNLOGGED batches of
    batch_rows rows, all built before the clock starts, sent with in_flight requests. Returns rows/s and
    Cassandra's CPU µs per row."""
    from datetime import date
    from threading import Semaphore
    from cassandra.query import BatchStatement, BatchType
    cluster = Cluster(["127.0.0.1"], protocol_version=5)
    session = cluster.connect(KEYSPACE)
    insert = session.prepare("INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
    batches = []
    for b in range(rows // batch_rows):
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        for r in range(batch_rows):
            batch.add(insert, (f"ceil{b % 20}", date(2026, 1, 2), ("temp_in", "temp_out", "humidity", "light")[r % 4],
                               1_767_312_000_000 + b * batch_rows + r, 1.5))
        batches.append(batch)
    slots = Semaphore(in_flight)
    cassandra_cpu = cpu_seconds(cassandra_pid())
    started = time.monotonic()
    for batch in batches:
        slots.acquire()
        session.execute_async(batch).add_callbacks(lambda _r: slots.release(), lambda _e: slots.release())
    for _ in range(in_flight):
        slots.acquire()
    elapsed = time.monotonic() - started
    cassandra_cpu = cpu_seconds(cassandra_pid()) - cassandra_cpu
    cluster.shutdown()
    done = len(batches) * batch_rows
    return done / elapsed, cassandra_cpu / done * 1e6


def single_row_reference(rows: int, in_flight: int = 256) -> float:
    """The same driver, one prepared INSERT per row, execute_async with a bound on requests in flight."""
    from datetime import date
    from threading import Semaphore
    cluster = Cluster(["127.0.0.1"], protocol_version=5)
    session = cluster.connect(KEYSPACE)
    insert = session.prepare("INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
    slots = Semaphore(in_flight)
    errors = []
    day = date(2026, 1, 1)
    started = time.monotonic()
    for i in range(rows):
        slots.acquire()
        future = session.execute_async(insert, (f"ref{i % 20}", day, "temp_in", 1_767_225_600_000 + i, 1.5))
        future.add_callbacks(lambda _r: slots.release(), lambda e: (errors.append(e), slots.release()))
    for _ in range(in_flight):
        slots.acquire()
    elapsed = time.monotonic() - started
    cluster.shutdown()
    if errors:
        print(f"  single-row reference: {len(errors)} errors, e.g. {errors[0]}")
    return rows / elapsed


def latte_reference(seconds: int) -> float | None:
    if not LATTE.exists():
        print(f"  building latte {LATTE_VERSION} (cargo, once; ~10 min on 2 cores) ...", flush=True)
        try:
            sh("cargo", "install", "--root", LATTE.parent.parent, "latte-cli", "--version", LATTE_VERSION,
               "--locked", stdout=subprocess.DEVNULL, stderr=open(WORK / "latte-build.log", "w"))
        except (subprocess.CalledProcessError, FileNotFoundError) as error:
            print(f"  latte could not be built ({error}); see {WORK}/latte-build.log")
            return None
    workload = Path(__file__).with_name("latte_single_row_insert.rn")
    result = subprocess.run([LATTE, "run", workload, "-d", f"{seconds}s", "-p", "256", "127.0.0.1"],
                            capture_output=True, text=True, cwd=WORK)
    (WORK / "latte.log").write_text(result.stdout + result.stderr)
    for line in result.stdout.splitlines():
        if line.strip().startswith("Throughput"):  # the summary's "Throughput [op/s] 44745 ± 16207"
            numbers = [float(x) for x in line.replace(",", "").split() if x.replace(".", "", 1).isdigit()]
            if numbers:
                return numbers[0]
    print(f"  latte gave no throughput line; see {WORK}/latte.log")
    return None


DELIVERY = "telemetry_gateway_delivery_latency_seconds"
REQUEST = "telemetry_gateway_write_latency_seconds"


def steady_latency(seconds: int, sources: int, env: dict | None = None) -> tuple[Run, Callable]:
    """A 1,000 frames/s run; returns it and ms(histogram, q): its quantiles with the start-up left out."""
    run, last, steady = bench_pty(1000 * (seconds + STEADY_AFTER_S), sources, 1000, 9305,
                                  steady_after_s=STEADY_AFTER_S, env=env)
    return run, lambda name, q: quantile(last, name, q, since=steady) * 1000


def compare(variant: dict[str, str], repeat: int, frames_file: Path, frames: int, args) -> None:
    """The default configuration and a variant, alternated in one run (this VM drifts within minutes, so only
    neighbouring runs compare): file replay rate and steady latency of each, and their ratios."""
    label = " ".join(f"{k}={v}" for k, v in variant.items())
    print(f"comparing the defaults with {label}, {repeat} alternations; machine state: {machine_state()}\n")
    ratios: list[tuple[float, float]] = []
    for i in range(repeat):
        figures = []
        for env in ({}, variant):
            clean_slate()
            rate = bench_file(frames_file, frames, env).rate()
            clean_slate()
            _, ms = steady_latency(args.latency_seconds, args.sources, env)
            p50, p99 = ms(DELIVERY, 0.5), ms(DELIVERY, 0.99)
            figures.append((rate, p99))
            print(f"  {i + 1}. {'variant ' if env else 'defaults'}  file replay {rate:>9,.0f} rows/s   1,000 fr/s: "
                  f"p50 {p50:.1f} ms, p99 {p99:.1f} ms", flush=True)
        ratios.append((figures[1][0] / figures[0][0], figures[1][1] / figures[0][1]))
    rates, p99s = sorted(r for r, _ in ratios), sorted(p for _, p in ratios)
    print(f"\nvariant / defaults, median of {repeat}: rows/s {rates[len(rates) // 2]:.2f}, "
          f"p99 {p99s[len(p99s) // 2]:.2f}   (each: {', '.join(f'{r:.2f}/{p:.2f}' for r, p in ratios)})\n"
          f"machine state at the end: {machine_state()}")


def gateway_batching() -> tuple[int, int]:
    """The gateway's default batch_rows and max_in_flight, so the ceiling is measured with the same shape."""
    from telemetry_gateway.config import load_config
    config = load_config(None, env={})
    return config.cassandra.batch_rows, config.cassandra.max_in_flight


def main() -> None:
    p = argparse.ArgumentParser(prog="gateway/bench", description=__doc__)
    p.add_argument("--frames", type=int, default=250_000, help="frames for the file run (4 rows each)")
    p.add_argument("--paced-rate", type=int, default=100_000, help="rows/s offered in the paced run")
    p.add_argument("--paced-seconds", type=int, default=30, help="length of the paced run")
    p.add_argument("--pty-frames", type=int, default=100_000)
    p.add_argument("--sources", type=int, default=20)
    p.add_argument("--latency-seconds", type=int, default=20, help="length of the 1,000 frames/s run")
    p.add_argument("--reference-rows", type=int, default=200_000)
    p.add_argument("--latte-seconds", type=int, default=30)
    p.add_argument("--warmup-frames", type=int, default=100_000,
                   help="frames replayed first and not measured (see warm_up)")
    p.add_argument("--variant", action="append", default=[], metavar="TELEMETRY_KEY=VALUE",
                   help="compare the defaults with this setting instead (repeatable: one variant of several keys)")
    p.add_argument("--repeat", type=int, default=3, help="alternations with --variant")
    args = p.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    sh(ROOT / "deploy" / "local" / "cassandra", "start", stdout=subprocess.DEVNULL)
    fresh_keyspace()
    frames_file = WORK / f"frames-{args.frames}-{args.sources}.txt"
    simulate_file(frames_file, args.frames, args.sources)
    if args.variant:
        variant = dict(item.split("=", 1) for item in args.variant)
        if args.warmup_frames:
            print(warm_up_line(warm_up(args), args.warmup_frames * ROWS_PER_FRAME), flush=True)
        compare(variant, args.repeat, frames_file, args.frames, args)
        return
    print(f"gateway/bench: {args.sources} sources, 4 metrics a frame; local Cassandra, {os.cpu_count()} cores "
          f"shared with it\nmachine state: {machine_state()}\n")

    if args.warmup_frames:
        print(warm_up_line(warm_up(args), args.warmup_frames * ROWS_PER_FRAME), flush=True)
    print(f"(each phase starts on empty tables and an idle node: waited {clean_slate():.0f} s)", flush=True)

    cassandra_cpu = cpu_seconds(cassandra_pid())
    file_run = bench_file(frames_file, args.frames)
    cassandra_cpu = cpu_seconds(cassandra_pid()) - cassandra_cpu
    file_rate = file_run.rate()
    rows = args.frames * ROWS_PER_FRAME
    print(f"file replay      {rows:>9,} rows  {file_rate:>9,.0f} rows/s   peak RSS {file_run.peak_rss_kb / 1024:.0f} MB   "
          f"CPU per row: gateway {file_run.cpu_s / rows * 1e6:.1f} µs, Cassandra {cassandra_cpu / rows * 1e6:.1f} µs",
          flush=True)

    clean_slate()
    paced_run, paced_10s, paced_depth, drained_s = bench_paced(args.paced_rate, args.paced_seconds, args.sources)
    paced = f"{args.paced_rate:,.0f} rows/s offered for {args.paced_seconds} s"
    print(f"file, paced      {paced}: written at {', '.join(f'{r:,.0f}' for r in paced_10s)} rows/s (each 10 s), "
          f"at most {paced_depth:,.0f} frames waiting in the spool, all written and the gateway gone "
          f"{drained_s:.1f} s after the input ended   peak RSS {paced_run.peak_rss_kb / 1024:.0f} MB", flush=True)

    clean_slate()
    pty_run, _, _ = bench_pty(args.pty_frames, args.sources, 0, 9302)
    pty_rate = pty_run.rate()
    print(f"pty, unpaced     {args.pty_frames * ROWS_PER_FRAME:>9,} rows  {pty_rate:>9,.0f} rows/s   "
          f"peak RSS {pty_run.peak_rss_kb / 1024:.0f} MB", flush=True)

    clean_slate()
    lat_run, ms = steady_latency(args.latency_seconds, args.sources)
    p99 = ms(DELIVERY, 0.99)
    print(f"pty, 1,000 fr/s  line read → rows acknowledged: p50 {ms(DELIVERY, 0.5):.1f} ms, p99 {p99:.1f} ms   "
          f"peak RSS {lat_run.peak_rss_kb / 1024:.0f} MB   (Cassandra request alone: p50 {ms(REQUEST, 0.5):.1f} ms, "
          f"p99 {ms(REQUEST, 0.99):.1f} ms; the first {STEADY_AFTER_S} s after the first rows left out)", flush=True)

    clean_slate()
    drain_rate, fill_rate = bench_backlog(frames_file, args.frames)
    print(f"spool backlog    {args.frames * ROWS_PER_FRAME:>9,} rows  drained at {drain_rate:,.0f} rows/s "
          f"(filled at {fill_rate * ROWS_PER_FRAME:,.0f} rows/s with Cassandra away)", flush=True)

    batch_rows, in_flight = gateway_batching()
    clean_slate()
    ceiling, ceiling_cpu = batched_reference(args.reference_rows * 2, batch_rows, in_flight)
    print(f"reference: Python driver, pre-built batches of {batch_rows} rows, {in_flight} in flight: {ceiling:,.0f} "
          f"rows/s (Cassandra CPU {ceiling_cpu:.1f} µs per row)", flush=True)
    single = single_row_reference(args.reference_rows)
    print(f"reference: Python driver, single-row execute_async, 256 in flight: {single:,.0f} rows/s", flush=True)
    latte = latte_reference(args.latte_seconds)
    if latte:
        print(f"reference: latte {LATTE_VERSION}, single-row prepared inserts, 256 in flight: {latte:,.0f} rows/s")

    print("\nratios")
    print(f"  gateway file replay / single-row Python inserts: {file_rate / single:.1f}x")
    if latte:
        print(f"  gateway file replay / latte single-row inserts:  {file_rate / latte:.1f}x")
    print(f"  gateway file replay / pre-built batches:          {file_rate / ceiling:.2f}")
    print(f"  gateway pty / file replay:                        {pty_rate / file_rate:.2f}")
    print(f"  backlog drain / live (file) rate:                 {drain_rate / file_rate:.2f}   (target >= 0.80)")
    print(f"machine state at the end: {machine_state()}")
    runs = (file_run, paced_run, pty_run, lat_run)
    print(f"targets: >= 100,000 rows/s: {file_rate:,.0f} (file replay); {paced}: all written {drained_s:.1f} s "
          f"after the input ended; p99 <= 50 ms at 1,000 frames/s: {p99:.1f} ms; "
          f"RSS <= 80 MB: {max(run.peak_rss_kb for run in runs) / 1024:.0f} MB")


if __name__ == "__main__":
    main()
