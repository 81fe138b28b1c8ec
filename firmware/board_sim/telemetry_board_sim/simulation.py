"""What simulated boards print, in order: greenhouse v1 frames (live, or a backfill with explicit t) or the room
board's CSV lines, some damaged on purpose like a noisy link. Pure apart from the seeded generator."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Iterator

from .demo_weather import demo_reading
from .frame_encoder import SEQ_MODULUS, encode_frame
from .greenhouse_model import greenhouse_reading
from .room_board import room_csv_line, room_reading

FORMATS = ("v1", "csv")
# "mild": the same diurnal cycle every day (greenhouse_model.py); "demo": the demo's last three days, a frost night,
# a hot afternoon and a mild day, with the battery's voltage (demo_weather.py)
WEATHERS = ("mild", "demo")
# A damaged byte: one flipped bit in a frame (its CRC catches it). CSV has no checksum, so there the byte turns
# into a letter (a digit, `,`, `.` or `-` XOR 0x40), which makes the line a counted reject, never another reading.
_DAMAGE_BITS = {"v1": 0x01, "csv": 0x40}


@dataclass(frozen=True)
class SimulationSpec:
    sources: int = 1
    rate: float = 1.0  # lines per second, all sources together; 0 = as fast as the reader takes them
    count: int = 0  # lines to write; 0 = until stopped
    backfill_days: float = 0.0  # > 0: frames with explicit t, from now - days to now, every interval_s per source
    interval_s: float = 60.0
    corrupt_every: int = 0  # every Nth line gets one byte changed, like a noisy link
    seed: int = 1
    format: str = "v1"  # "v1": greenhouse frames; "csv": the room board's `light,temperature` lines
    weather: str = "mild"

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format {self.format!r} is not one of {', '.join(FORMATS)}")
        if self.weather not in WEATHERS:
            raise ValueError(f"weather {self.weather!r} is not one of {', '.join(WEATHERS)}")
        if self.format == "csv" and self.weather != "mild":
            raise ValueError("the room board (csv) has no weather but its own: no --weather demo")
        if self.format == "csv" and self.sources != 1:
            raise ValueError("a CSV line names no source: one room board per output (--sources 1)")
        if self.format == "csv" and self.backfill_days > 0:
            raise ValueError("a CSV line carries no time: no backfill (--days) in the csv format")


def source_names(count: int) -> list[str]:
    return [f"sim{i + 1}" for i in range(count)]


def simulated_lines(spec: SimulationSpec, now_ms: int) -> Iterator[bytes]:
    """The lines the boards print, in order."""
    rng = random.Random(spec.seed)
    lines = _room_lines(now_ms, rng) if spec.format == "csv" else _greenhouse_frames(spec, now_ms, rng)
    if spec.count:
        lines = itertools.islice(lines, spec.count)
    for written, line in enumerate(lines, 1):
        if spec.corrupt_every and written % spec.corrupt_every == 0:
            line = _damaged(line, spec.format, rng)
        yield line


def _greenhouse_frames(spec: SimulationSpec, now_ms: int, rng: random.Random) -> Iterator[bytes]:
    names = source_names(spec.sources)
    seqs = {name: 0 for name in names}
    if spec.backfill_days > 0:
        step = int(spec.interval_s * 1000)
        start = now_ms - int(spec.backfill_days * 86_400_000)
        times: Iterator[tuple[str, int | None, int]] = (
            (name, t, t) for t in range(start, now_ms, step) for name in names)
    else:
        times = ((names[i % len(names)], None, now_ms) for i in itertools.count())
    for name, t, model_ms in times:
        reading = greenhouse_reading(model_ms, rng) if spec.weather == "mild" else demo_reading(model_ms, now_ms, rng)
        yield encode_frame(name, seqs[name], reading, t=t)
        seqs[name] = (seqs[name] + 1) % SEQ_MODULUS


def _room_lines(now_ms: int, rng: random.Random) -> Iterator[bytes]:
    while True:
        yield room_csv_line(*room_reading(now_ms, rng))


def _damaged(line: bytes, format: str, rng: random.Random) -> bytes:
    # Frames: never the `$T1,` that starts a frame nor the CRC; CSV: any byte before the line ending.
    pos = rng.randrange(4, len(line) - 6) if format == "v1" else rng.randrange(0, len(line.rstrip(b"\r\n")))
    return line[:pos] + bytes([line[pos] ^ _DAMAGE_BITS[format]]) + line[pos + 1:]
