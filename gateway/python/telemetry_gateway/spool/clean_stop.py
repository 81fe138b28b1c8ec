"""The clean-stop marker (gateway/contract/spool.md, "A clean stop"): an empty file `<path>.clean-stop` that a
clean stop leaves once the spool is closed, and the next start takes away before anything is written.

SQLite removes the `-wal` file at a clean close, so a `-wal` file found at open means a crash; but a close whose
checkpoint found no room (a full disk) leaves its WAL too, with every frame in it. The marker tells the two apart.
An empty file takes no data block, so it can be made on a full disk; it and its directory are fsynced, so a power
cut after the stop keeps it, and taking it away is fsynced too, so a crash later in the run is never taken for a
clean stop.
"""

from __future__ import annotations

import os
from pathlib import Path


def marker(path: Path) -> Path:
    return path.with_name(path.name + ".clean-stop")


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def take(path: Path) -> bool:
    """Whether the last run stopped cleanly (its marker is there); the marker is removed, durably."""
    try:
        marker(path).unlink()
    except FileNotFoundError:
        return False
    _sync_folder(path.parent)
    return True


def leave(path: Path) -> bool:
    """After the spool is closed at a clean stop; False if even an empty file did not fit (no inode left)."""
    try:
        fd = os.open(marker(path), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _sync_folder(path.parent)
    except OSError:
        return False
    return True
