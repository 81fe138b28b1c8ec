"""Virtual boards: greenhouse frames written to a pseudo-terminal (a path a gateway opens like /dev/ttyUSB0),
to a file, or to stdout. Live mode paces frames at a rate; backfill mode (--days) writes the past with explicit t.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
import tty
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from .frame import encode_frame
from .greenhouse_model import greenhouse_reading


@dataclass(frozen=True)
class SimulationSpec:
    sources: int = 1
    rate: float = 1.0  # frames per second, all sources together; 0 = as fast as the reader takes them
    count: int = 0  # frames to write; 0 = until stopped
    backfill_days: float = 0.0  # > 0: frames with explicit t, from now - days to now, every interval_s per source
    interval_s: float = 60.0
    corrupt_every: int = 0  # every Nth line gets one byte changed (a bad CRC), like a noisy link
    seed: int = 1


def source_names(count: int) -> list[str]:
    return [f"sim{i + 1}" for i in range(count)]


def simulated_lines(spec: SimulationSpec, now_ms: int) -> Iterator[bytes]:
    """The lines the boards print, in order (pure apart from the seeded generator)."""
    rng = random.Random(spec.seed)
    names = source_names(spec.sources)
    seqs = {name: 0 for name in names}
    if spec.backfill_days > 0:
        step = int(spec.interval_s * 1000)
        start = now_ms - int(spec.backfill_days * 86_400_000)
        times: Iterator[tuple[str, int | None, int]] = (
            (name, t, t) for t in range(start, now_ms, step) for name in names)
    else:
        times = ((names[i % len(names)], None, now_ms) for i in _forever())
    written = 0
    for name, t, model_ms in times:
        if spec.count and written >= spec.count:
            return
        line = encode_frame(name, seqs[name], greenhouse_reading(model_ms, rng), t=t)
        seqs[name] = (seqs[name] + 1) % 65536
        written += 1
        if spec.corrupt_every and written % spec.corrupt_every == 0:
            pos = rng.randrange(4, len(line) - 6)
            line = line[:pos] + bytes([line[pos] ^ 0x01]) + line[pos + 1:]
        yield line


def _forever() -> Iterator[int]:
    i = 0
    while True:
        yield i
        i += 1


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
    print(f"simulate: wrote {written} lines", file=sys.stderr)
    return 0
