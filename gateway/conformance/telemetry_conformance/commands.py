"""Every gateway implementation by name, and the one under test (GATEWAY_COMMAND, shlex-split)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The kit is installed editable from a checkout: the gateways it starts are that checkout's.
ROOT = Path(__file__).resolve().parents[3]
# Every gateway implementation by name: the conformance scenarios run once per gateway (conftest.py) and the
# benchmark puts them side by side (gateway/benchmark). GATEWAY_COMMAND names any other one.
GATEWAY_COMMANDS = {
    "python": [str(ROOT / ".venv" / "bin" / "telemetry-gateway")],
    "node": [str(ROOT / "gateway" / "node" / "bin" / "telemetry-gateway-node")],
}
DEFAULT_COMMAND = GATEWAY_COMMANDS["python"][0]


def gateway_command() -> list[str]:
    return shlex.split(os.environ.get("GATEWAY_COMMAND", DEFAULT_COMMAND))


def gateways_under_test() -> dict[str, list[str]]:
    """name → command of each gateway the scenarios run: GATEWAY_COMMAND alone, else CONFORMANCE_GATEWAYS."""
    if os.environ.get("GATEWAY_COMMAND"):
        return {"command": shlex.split(os.environ["GATEWAY_COMMAND"])}
    return {name: GATEWAY_COMMANDS[name] for name in os.environ.get("CONFORMANCE_GATEWAYS", "python,node").split(",")}


@contextmanager
def running(command: list[str], **popen_args) -> Iterator[subprocess.Popen]:
    """A process with stdout piped (stderr joined to it), killed on the way out if it is still running."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **popen_args)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def stop(process: subprocess.Popen, signal_number: int = signal.SIGTERM, timeout: float = 30) -> str:
    """Signals a process from running(), asserts it exits 0 in time, and returns all it wrote."""
    process.send_signal(signal_number)
    assert process.wait(timeout=timeout) == 0, process.stdout.read().decode(errors="replace")[-4000:]
    return process.stdout.read().decode()
