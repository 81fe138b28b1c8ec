"""Reads an input may hold in memory, not yet spooled: a read needs a credit, and the ingest gives it back once the
read's frames are committed. A serial port's bytes are safe in the kernel until read, so a crash loses at most
these reads (one being committed, one waiting: a few ms of input); while the spool has no room the credits are
held back and reading pauses with nothing in memory. A file can be replayed: it may read further ahead. A read's
credits are a threading.Semaphore (line_handler.LineHandler.credits)."""

from __future__ import annotations

from .contract_constants import contract_number

SERIAL_CREDITS = contract_number("serial_read_credits")
STREAM_CREDITS = contract_number("stream_read_credits")
