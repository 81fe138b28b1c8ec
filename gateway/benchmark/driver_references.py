"""Reference loads from the same Python driver, into the bench keyspace's readings table: pre-built
single-partition batches shaped like the gateway's (the ceiling for any client of this driver here), and
single-row inserts."""

from __future__ import annotations

import time
import tomllib
from datetime import date
from threading import Semaphore
from typing import NamedTuple

from cassandra.query import BatchStatement, BatchType
from telemetry_conformance.process_usage import cassandra_pid, cpu_seconds

from bench_keyspace import bench_cluster
from bench_settings import KEYSPACE, ROOT

INSERT = "INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)"
# gateway/contract/config.md: the one annotated example shows every key at its default.
EXAMPLE_CONFIG = ROOT / "gateway" / "contract" / "telemetry-gateway.example.toml"


def gateway_batching() -> tuple[int, int]:
    """The gateway's default batch_rows and max_in_flight, so the ceiling is measured with the same shape."""
    with open(EXAMPLE_CONFIG, "rb") as f:
        cassandra = tomllib.load(f)["cassandra"]
    return cassandra["batch_rows"], cassandra["max_in_flight"]


class Ceiling(NamedTuple):
    """What the pre-built batches gave: rows/s, and CPU µs per row of Cassandra and of this client (the driver's
    encoding and I/O: this process does nothing else meanwhile)."""
    rate: float
    cassandra_cpu_us: float
    client_cpu_us: float


def batched_reference(rows: int, batch_rows: int, in_flight: int) -> Ceiling:
    """The readings insert in single-partition UNLOGGED batches of batch_rows rows, all built before the clock
    starts, sent with in_flight requests."""
    cluster = bench_cluster()
    session = cluster.connect(KEYSPACE)
    insert = session.prepare(INSERT)
    batches = []
    for b in range(rows // batch_rows):
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        for r in range(batch_rows):
            batch.add(insert, (f"ceil{b % 20}", date(2026, 1, 2), ("temp_in", "temp_out", "humidity", "light")[r % 4],
                               1_767_312_000_000 + b * batch_rows + r, 1.5))
        batches.append(batch)
    slots = Semaphore(in_flight)
    cassandra_cpu, client_cpu = cpu_seconds(cassandra_pid()), time.process_time()
    started = time.monotonic()
    for batch in batches:
        slots.acquire()
        session.execute_async(batch).add_callbacks(lambda _r: slots.release(), lambda _e: slots.release())
    for _ in range(in_flight):
        slots.acquire()
    elapsed = time.monotonic() - started
    cassandra_cpu, client_cpu = cpu_seconds(cassandra_pid()) - cassandra_cpu, time.process_time() - client_cpu
    cluster.shutdown()
    done = len(batches) * batch_rows
    return Ceiling(done / elapsed, cassandra_cpu / done * 1e6, client_cpu / done * 1e6)


def single_row_reference(rows: int, in_flight: int = 256) -> float:
    """One prepared INSERT per row, execute_async with a bound on requests in flight."""
    cluster = bench_cluster()
    session = cluster.connect(KEYSPACE)
    insert = session.prepare(INSERT)
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
