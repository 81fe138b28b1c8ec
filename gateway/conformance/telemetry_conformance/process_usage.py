"""CPU time and peak memory of processes (the gateway under test, the local Cassandra node) from /proc."""

from __future__ import annotations

import os
from pathlib import Path

from .commands import ROOT


def stat_cpu_seconds(stat: Path) -> float:
    """User + system CPU time so far from a /proc .../stat file (a process's or one of its threads')."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    return stat_cpu_seconds(Path(f"/proc/{pid}/stat"))


def peak_rss_kb(pid: int) -> int:
    """The most resident memory the process has used so far (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


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
    """The local node's process (deploy/local/cassandra, node 1)."""
    return int((ROOT / ".state" / "cassandra" / "node1" / "cassandra.pid").read_text())
