"""The Pi units as the tests see them: where they are, their [Service] settings, and a copy whose ExecStart runs
this checkout's gateway instead of the one deploy/pi/install puts under /opt."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PI = ROOT / "deploy" / "pi"
UNITS = ("telemetry-gateway.service", "telemetry-gateway-node.service")
# Where deploy/pi/install puts each gateway's command, and the same command in this checkout (after make setup).
INSTALLED_COMMANDS = {
    "/opt/telemetry-gateway/venv/bin/telemetry-gateway": ROOT / ".venv" / "bin" / "telemetry-gateway",
    "/opt/telemetry-gateway-node/bin/telemetry-gateway-node": ROOT / "gateway" / "node" / "bin" / "telemetry-gateway-node",
}


def service_settings(unit_text: str) -> dict[str, list[str]]:
    """Every KEY=VALUE of the [Service] section, in order, by key (comments and other sections left out)."""
    settings: dict[str, list[str]] = {}
    section = None
    for line in unit_text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def with_checkout_commands(unit_text: str) -> str:
    """The unit with its ExecStart pointing at this checkout's gateway (systemd-analyze verify needs an executable
    that exists)."""
    for installed, local in INSTALLED_COMMANDS.items():
        unit_text = unit_text.replace(installed, str(local))
    return unit_text


def systemd_analyze(*args: str) -> subprocess.CompletedProcess:
    # `make setup` installs it (Debian's systemd package): absent means the set-up is broken, not a reason to skip.
    assert shutil.which("systemd-analyze"), "systemd-analyze is missing: run `make setup` (apt-get install systemd)"
    return subprocess.run(["systemd-analyze", *args], capture_output=True, text=True, timeout=120)


def verify_problems(unit: Path) -> list[str]:
    """What `systemd-analyze verify` says about this unit file: it exits 0 on unknown keys and bad values, which it
    only reports on stderr, so every stderr line naming the unit is a problem."""
    result = systemd_analyze("verify", str(unit))
    problems = [line for line in result.stderr.splitlines() if unit.name in line]
    if result.returncode != 0:
        problems.append(f"exit status {result.returncode}: {result.stderr.strip()}")
    return problems
