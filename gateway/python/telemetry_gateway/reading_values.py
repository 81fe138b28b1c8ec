"""A frame's values as the spool stores them: the metric names as one text, the values as big-endian IEEE-754
doubles, which is exactly how CQL serializes a `double`. The sender slices them into the batch as they are, with
no conversion per row; a frame's layout (its names) is shared by thousands of frames, so it is parsed once.
"""

from __future__ import annotations

import struct
from functools import lru_cache

DOUBLE_BYTES = 8


@lru_cache(maxsize=64)
def doubles_struct(count: int) -> struct.Struct:
    return struct.Struct(f">{count}d")


def pack_values(values: tuple[tuple[str, float], ...]) -> tuple[str, bytes]:
    """(("temp_in", 5.5), ("light", 0.0)) → ("temp_in,light", 16 bytes)."""
    names, numbers = zip(*values)
    return ",".join(names), doubles_struct(len(numbers)).pack(*numbers)


@lru_cache(maxsize=1024)
def metric_names(names: str) -> tuple[str, ...]:
    return tuple(names.split(","))


def unpack_values(names: str, data: bytes) -> tuple[tuple[str, float], ...]:
    metrics = metric_names(names)
    return tuple(zip(metrics, doubles_struct(len(metrics)).unpack(data)))
