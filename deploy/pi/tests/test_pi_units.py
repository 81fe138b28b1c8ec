"""The Pi units: each scores at most 2.0 on the real `systemd-analyze security --offline=yes`, verifies cleanly, and
has the hardening settings deploy/pi/README.md lists (the Node unit with its two documented exceptions)."""

from __future__ import annotations

import re

import pytest

from pi_units import PI, UNITS, service_settings, systemd_analyze, verify_problems, with_checkout_commands

MOST_EXPOSURE = 2.0


def exposure(unit_path) -> float:
    result = systemd_analyze("security", "--offline=yes", str(unit_path))
    match = re.search(rf"Overall exposure level for {re.escape(unit_path.name)}: (\d+\.\d+) ", result.stdout)
    assert match, f"no overall exposure level in:\n{result.stdout}\n{result.stderr}"
    return float(match.group(1))


@pytest.mark.parametrize("unit_name", UNITS)
def test_unit_scores_at_most_2(unit_name):
    score = exposure(PI / unit_name)
    assert score <= MOST_EXPOSURE, f"{unit_name} scores {score} on systemd-analyze security"


def test_the_score_reads_a_weaker_unit_as_weaker(tmp_path):
    """The parse is of the real figure: the same unit without its sandbox scores far worse."""
    unit = tmp_path / UNITS[0]
    kept = [line for line in (PI / UNITS[0]).read_text().splitlines()
            if not re.match(r"(Protect|Private|Restrict|SystemCall|Capability|Device|NoNewPriv|MemoryDeny)", line)]
    unit.write_text("\n".join(kept) + "\n")
    assert exposure(unit) > 5.0


@pytest.mark.parametrize("unit_name", UNITS)
def test_unit_file_verifies(tmp_path, unit_name):
    local = tmp_path / unit_name
    local.write_text(with_checkout_commands((PI / unit_name).read_text()))
    assert "/opt/" not in service_settings(local.read_text())["ExecStart"][0]
    assert verify_problems(local) == []


def test_verify_reports_an_unknown_key(tmp_path):
    """systemd-analyze verify exits 0 on an unknown key: the check above must still see it."""
    local = tmp_path / UNITS[0]
    local.write_text(with_checkout_commands((PI / UNITS[0]).read_text()).replace("[Service]\n",
                                                                                   "[Service]\nProtectSytem=strict\n"))
    assert any("ProtectSytem" in problem for problem in verify_problems(local))


@pytest.mark.parametrize("unit_name", UNITS)
def test_unit_has_the_least_privilege_settings(unit_name):
    settings = service_settings((PI / unit_name).read_text())
    one = {key: values[-1] for key, values in settings.items()}
    assert (one["User"], one["Group"], one["SupplementaryGroups"]) == ("telemetry", "telemetry", "dialout")
    assert (one["Type"], one["Restart"], one["ProtectSystem"], one["DevicePolicy"]) == \
        ("notify", "always", "strict", "closed")
    assert int(one["WatchdogSec"]) > 0
    assert one["ExecStart"].endswith(" run --config /etc/telemetry-gateway/config.toml")
    # The one writable place is the spool's state directory: no ReadWritePaths, no other *Directory=.
    assert one["StateDirectory"] == "telemetry-gateway" and "ReadWritePaths" not in settings
    assert sorted(settings["DeviceAllow"]) == ["char-ttyACM rw", "char-ttyUSB rw"]
    assert one["RestrictAddressFamilies"].split() == ["AF_INET", "AF_INET6", "AF_UNIX"]
    assert settings["SystemCallFilter"][0] == "@system-service"
    assert settings["LoadCredential"] == ["cassandra:/etc/telemetry-gateway/credentials.toml"]
    assert "TELEMETRY_CASSANDRA_CREDENTIALS_FILE=%d/cassandra" in settings["Environment"]
    if "node" in unit_name:  # the gateway notifies through a child process, and V8 needs W+X memory
        assert one["NotifyAccess"] == "all" and "MemoryDenyWriteExecute" not in settings
    else:
        assert one["MemoryDenyWriteExecute"] == "yes" and "NotifyAccess" not in settings
