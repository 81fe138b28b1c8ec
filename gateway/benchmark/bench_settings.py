"""What every part of the benchmark shares: where it works, its keyspace, and the shape of the simulated input."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".state" / "bench"
KEYSPACE = "gateway_bench"
ROWS_PER_FRAME = 4  # the simulator's boards send 4 metrics a frame
