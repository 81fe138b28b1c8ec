"""The gateway's input, from the simulated boards (telemetry-board-sim): a file of frames, or boards on a pty."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from bench_settings import ROOT, WORK

BOARD_SIM = str(ROOT / ".venv" / "bin" / "telemetry-board-sim")


def frames_file(frames: int, sources: int) -> Path:
    """A file of `frames` unpaced frames from `sources` boards, made once and kept in WORK for later runs."""
    path = WORK / f"frames-{frames}-{sources}.txt"
    if not path.exists() or path.stat().st_size == 0:
        subprocess.run([BOARD_SIM, "--output", str(path), "--sources", str(sources), "--rate", "0",
                        "--count", str(frames)], check=True, stderr=subprocess.DEVNULL)
    return path


def boards_on_pty(link: Path, frames: int, sources: int, rate: float) -> subprocess.Popen:
    """Boards writing `frames` frames at `rate` frames/s (0: as fast as they can) into a pty linked at link;
    returns once the link exists."""
    board = subprocess.Popen([BOARD_SIM, "--pty", str(link), "--sources", str(sources), "--rate", str(rate),
                              "--count", str(frames)], stderr=subprocess.DEVNULL)
    while not link.exists():
        if board.poll() is not None:
            raise SystemExit(f"bench: telemetry-board-sim exited with {board.returncode} before creating {link}")
        time.sleep(0.05)
    return board
