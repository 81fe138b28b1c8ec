"""A power cut for files: a directory mounted through powercutfs (gateway/conformance/powercutfs), which holds each
file's written data in memory until that file is fsynced. cut() forgets it all, as a power cut would; metadata
(create, rename, unlink, truncate, mkdir) has already reached the backing directory (see the powercutfs README).

    with PowerCutMount(backing_dir, mountpoint) as fs:   # mounted
        ...write under fs.mountpoint...
        fs.cut()        # SIGKILL the FS, `fusermount3 -uz`, mount again: unsynced data is gone
    # stop(): SIGTERM, the FS writes everything back and unmounts (an orderly shutdown)

A cut leaves every process that still has a file open there with a dead file descriptor: kill those processes
first (a power cut kills everything), then cut(), then start them again. Needs root (or user_allow_other) and
/dev/fuse; the binary is built by `make setup` (ensure_built() builds it if it is missing or older than its source).
"""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .commands import ROOT

SOURCE = ROOT / "gateway" / "conformance" / "powercutfs"
BINARY = SOURCE / "powercutfs"


def ensure_built() -> Path:
    """The powercutfs binary, (re)built with its Makefile when missing or stale."""
    made = subprocess.run(["make", "-s", "-C", str(SOURCE)], capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"building powercutfs failed (needs libfuse3-dev, pkg-config: make setup):\n"
                           f"{made.stdout}{made.stderr}")
    return BINARY


def _unescape(field: str) -> str:
    """A /proc/self/mountinfo path: space, tab, newline and backslash are octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mounted_here(mountpoint: Path) -> bool:
    """True while a powercutfs mount (live or dead) sits on mountpoint."""
    target = str(mountpoint)
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            fs_type = fields[fields.index("-") + 1]
            if _unescape(fields[4]) == target and fs_type == "fuse.powercut":
                return True
    return False


class PowerCutMount:
    """backing_dir mounted at mountpoint through powercutfs; cut() is a power cut of that file system."""

    def __init__(self, backing_dir, mountpoint, start_timeout: float = 10.0):
        self.backing_dir = Path(backing_dir).resolve()
        self.mountpoint = Path(mountpoint).resolve()
        self.start_timeout = start_timeout
        self.cuts = 0
        self._process: subprocess.Popen | None = None
        self._log = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> "PowerCutMount":
        """Mounts, and returns once the mount answers."""
        if self._process is not None:
            raise RuntimeError(f"powercutfs already mounted at {self.mountpoint}")
        binary = ensure_built()
        self.backing_dir.mkdir(parents=True, exist_ok=True)
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        if mounted_here(self.mountpoint):  # a dead mount left by a killed run
            self._unmount()
        self._log = tempfile.TemporaryFile()
        self._process = subprocess.Popen([str(binary), str(self.backing_dir), str(self.mountpoint)],
                                         stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + self.start_timeout
        while not mounted_here(self.mountpoint):
            if self._process.poll() is not None or time.monotonic() > deadline:
                output = self._output()
                self._kill()
                raise RuntimeError(f"powercutfs did not mount {self.backing_dir} at {self.mountpoint}:\n{output}")
            time.sleep(0.01)
        os.stat(self.mountpoint)  # the first request answered: the mount is live
        return self

    def cut(self) -> None:
        """A power cut: the FS process SIGKILLed (its unsynced data forgotten), the dead mount detached, and the
        backing directory mounted again. Returns once the new mount answers."""
        if self._process is None:
            raise RuntimeError(f"powercutfs is not mounted at {self.mountpoint}")
        self._kill()
        self._unmount()
        self.cuts += 1
        self.start()

    def stop(self) -> None:
        """An orderly shutdown: SIGTERM; the FS writes every held byte back to the backing directory, unmounts."""
        if self._process is None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None
        if mounted_here(self.mountpoint):
            self._unmount()
        self._close_log()

    def _kill(self) -> None:
        self._process.kill()
        self._process.wait()
        self._process = None
        self._close_log()

    def _unmount(self) -> None:
        subprocess.run(["fusermount3", "-uz", str(self.mountpoint)], capture_output=True, check=True)

    def _output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "PowerCutMount":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
