"""gateway/contract/config-vectors against the pure config parser, and `telemetry-gateway check` printing each
invalid case's error; config.md documents every key."""

import json
import os
import re
import tomllib
from dataclasses import asdict, fields
from pathlib import Path

import pytest

from telemetry_gateway import cli
from telemetry_gateway.config import Config, ConfigError, load_config, parse_config
from telemetry_gateway.config_error import RULES
from telemetry_gateway.config_schema import ALERT_TABLE

CONTRACT = Path(__file__).resolve().parents[3] / "gateway" / "contract"
VECTORS = CONTRACT / "config-vectors"
INDEX = json.loads((VECTORS / "index.json").read_text())


def resolved(config: Config) -> dict:
    return json.loads(json.dumps(asdict(config)))  # tuples → lists, as the vectors write them


@pytest.mark.parametrize("case", INDEX["valid"], ids=[c["file"] for c in INDEX["valid"]])
def test_valid_config_resolves(case):
    data = tomllib.loads((VECTORS / case["file"]).read_text())
    assert resolved(parse_config(data, env=case.get("env", {}))) == case["resolved"]


@pytest.mark.parametrize("case", INDEX["invalid"], ids=[c["file"] for c in INDEX["invalid"]])
def test_invalid_config_names_key_and_rule(case):
    assert case["rule"] in RULES
    with pytest.raises(ConfigError) as caught:
        load_config(VECTORS / case["file"], env=case.get("env", {}))
    assert (caught.value.key, caught.value.rule) == (case["key"], case["rule"])


def expected_in_message(case) -> str:
    return f"at {case['key']} [{case['rule']}]" if case["key"] else f"[{case['rule']}]"


@pytest.mark.parametrize("case", INDEX["invalid"], ids=[c["file"] for c in INDEX["invalid"]])
def test_check_prints_the_error_and_exits_2(case, monkeypatch, capsys):
    for name in [n for n in os.environ if n.startswith("TELEMETRY_")]:
        monkeypatch.delenv(name)
    for name, value in case.get("env", {}).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["check", "--config", str(VECTORS / case["file"])]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert re.fullmatch(r"telemetry-gateway: config error.*\n", out.err)
    assert expected_in_message(case) in out.err


def test_every_key_and_rule_is_in_config_md():
    text = (CONTRACT / "config.md").read_text()
    for section in fields(Config):
        if section.name == "alerts":  # a list of tables, below
            continue
        for key in fields(section.default):
            assert f"`{section.name}.{key.name}`" in text
            assert f"TELEMETRY_{section.name.upper()}_{key.name.upper()}" in text
    for name in ("path", "baud", "format", "source", "columns"):
        assert f"`serial.ports[i].{name}`" in text
    for name in ALERT_TABLE:
        assert f"`alerts[i].{name}`" in text
    for rule in RULES:
        assert f"| `{rule}` |" in text


def test_vectors_break_every_rule():
    assert {case["rule"] for case in INDEX["invalid"]} == set(RULES)
    assert not (VECTORS / "invalid" / "absent.toml").exists()  # the unreadable case
