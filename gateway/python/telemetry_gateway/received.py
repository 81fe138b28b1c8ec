"""One read of an input, as the input hands it to the ingest."""

from __future__ import annotations

import threading
from typing import NamedTuple

from .frame import Frame


class Received(NamedTuple):
    frames: list[Frame]  # the frames of one read
    received_ms: int
    credit: threading.Semaphore  # the reader's: released once these frames are committed
    trusted: bool = False  # from a trusted input (signing.md, "Trusted inputs")
