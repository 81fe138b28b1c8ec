"""The gateways the benchmark can measure, by name: the commands it starts them with (`<command> run ...`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from telemetry_conformance import GATEWAY_COMMANDS, gateway_command

# GATEWAY_COMMAND, when set, adds a third name to the conformance kit's GATEWAY_COMMANDS, "custom": that command,
# shlex-split as the conformance kit does.
CUSTOM = "custom"


@dataclass(frozen=True)
class Gateway:
    """One gateway implementation under test: its name in the figures and the command that starts it."""
    name: str
    command: list[str]


def default_gateway_names() -> str:
    """python,node, and custom after them when GATEWAY_COMMAND is set."""
    return ",".join([*GATEWAY_COMMANDS, *([CUSTOM] if os.environ.get("GATEWAY_COMMAND") else [])])


def chosen_gateways(names: str) -> list[Gateway]:
    """The gateways of a comma-separated list of names, in its order (the order they alternate in)."""
    commands = dict(GATEWAY_COMMANDS)
    if os.environ.get("GATEWAY_COMMAND"):
        commands[CUSTOM] = gateway_command()
    gateways = []
    for name in filter(None, (n.strip() for n in names.split(","))):
        if name not in commands:
            hint = "" if name != CUSTOM else " (custom is the command GATEWAY_COMMAND names, and it is not set)"
            raise SystemExit(f"bench: no gateway named {name!r}; known: {', '.join(commands)}{hint}")
        gateways.append(Gateway(name, commands[name]))
    if not gateways:
        raise SystemExit("bench: --gateways names no gateway")
    if len({g.name for g in gateways}) < len(gateways):  # figures are kept by name
        raise SystemExit(f"bench: --gateways names a gateway twice ({names}); GATEWAY_COMMAND adds another (custom)")
    return gateways
