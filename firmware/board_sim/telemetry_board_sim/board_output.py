"""Where simulated boards print: a pseudo-terminal (a path a gateway opens like /dev/ttyUSB0), a file or stdout.
Live mode paces lines at the spec's rate; backfill mode writes as fast as the sink takes them."""

from __future__ import annotations

import os
import signal
import sys
import time
import tty
from typing import BinaryIO

from .simulation import SimulationSpec, simulated_lines


class PseudoTerminal:
    """A pty whose slave side is reachable at `link`, as a USB serial adapter's device node would be."""

    def __init__(self, link: str) -> None:
        self.link = link
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no newline translation: bytes pass as on a real serial line
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.ttyname(self._slave), link)

    def close(self) -> None:
        if os.path.islink(self.link):
            os.unlink(self.link)
        os.close(self._slave)
        os.close(self.master)


def run_simulation(spec: SimulationSpec, output: str | None, pty_link: str | None) -> int:
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    pty = PseudoTerminal(pty_link) if pty_link else None
    sink: BinaryIO | None = None
    if pty is None:
        sink = sys.stdout.buffer if output in (None, "-") else open(output, "wb")
    written = 0
    started = time.monotonic()
    try:
        for line in simulated_lines(spec, int(time.time() * 1000)):
            if stop:
                break
            if pty is not None:
                os.write(pty.master, line)
            else:
                sink.write(line)
            written += 1
            if spec.rate > 0 and spec.backfill_days == 0:
                delay = started + written / spec.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
    except KeyboardInterrupt:
        pass
    finally:
        if sink is not None and sink is not sys.stdout.buffer:
            sink.close()
        elif sink is not None:
            sink.flush()
        if pty is not None:
            time.sleep(0.2)  # let the reader take the last bytes before the pty goes away
            pty.close()
    print(f"telemetry-board-sim: wrote {written} lines", file=sys.stderr)
    return 0
