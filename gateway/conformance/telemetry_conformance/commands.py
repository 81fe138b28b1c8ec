"""Every gateway implementation by name, and the one under test (GATEWAY_COMMAND, shlex-split)."""

from __future__ import annotations

import os
import shlex
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
