"""How fast this machine is right now: figures from two runs compare only together with these."""

from __future__ import annotations

import os
import time


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
