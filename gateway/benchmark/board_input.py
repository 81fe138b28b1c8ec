"""The gateway's input from the simulated boards (telemetry-board-sim) as a file of frames (boards on a pty:
telemetry_conformance.boards_on_pty)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from telemetry_conformance.boards import BOARD_SIM

from bench_settings import WORK


def frames_file(frames: int, sources: int) -> Path:
    """A file of `frames` unpaced frames from `sources` boards, made once and kept in WORK for later runs."""
    path = WORK / f"frames-{frames}-{sources}.txt"
    if not path.exists() or path.stat().st_size == 0:
        subprocess.run([BOARD_SIM, "--output", str(path), "--sources", str(sources), "--rate", "0",
                        "--count", str(frames)], check=True, stderr=subprocess.DEVNULL)
    return path
