"""Simulated sensor boards on real pseudo-terminals: a board the test writes through, numbered frame streams, writers
that send at a steady rate from a thread of their own, and telemetry-board-sim processes on a pty. Boards are
simulated with telemetry_board_sim (firmware/board_sim), never with a gateway's own code."""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
import tty
from pathlib import Path

from telemetry_board_sim import encode_frame

from .commands import ROOT

BOARD_SIM = str(ROOT / ".venv" / "bin" / "telemetry-board-sim")


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


class PacedWriter(threading.Thread):
    """A board sending numbered frames at a steady rate from a thread of its own, so a test can kill things at
    random moments meanwhile. Even frame numbers carry an explicit t (a unique millisecond, so their rows' ts are
    known exactly); odd ones are stamped on receipt by the gateway. Each frame is recorded when its last byte is
    in the pty: (n, monotonic time, wall-clock ms). After a write blocked on a full pty (nobody reading) it catches
    up with the schedule at full speed, unless catch_up is False: then it goes on at the rate from there, as a board
    would (a burst of thousands of frames a second has each receipt stamp a millisecond after the last, running
    ahead of the clock)."""

    def __init__(self, board: Board, stream: Stream, rate: float, t_base_ms: int, catch_up: bool = True) -> None:
        super().__init__(daemon=True)
        self.board, self.stream, self.rate, self.t_base_ms = board, stream, rate, t_base_ms
        self.catch_up = catch_up
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
                if not self.catch_up:
                    start = max(start, time.monotonic() - n / self.rate)
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


def boards_on_pty(link: Path, frames: int, sources: int, rate: float) -> subprocess.Popen:
    """telemetry-board-sim boards writing `frames` frames (0: without end) at `rate` frames/s (0: as fast as they
    can) into a pty linked at link; returns once the link exists."""
    board = subprocess.Popen([BOARD_SIM, "--pty", str(link), "--sources", str(sources), "--rate", str(rate),
                              "--count", str(frames)], stderr=subprocess.DEVNULL)
    while not link.exists():
        if board.poll() is not None:
            raise SystemExit(f"telemetry-board-sim exited with {board.returncode} before creating {link}")
        time.sleep(0.05)
    return board
