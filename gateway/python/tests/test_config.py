"""The example file documents every key, env and flags override, credentials. The rules and their errors are
gateway/contract/config-vectors (test_config_contract.py)."""

import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from telemetry_gateway.config import Config, ConfigError, load_config, read_credentials
from telemetry_gateway.serial_port_entries import SerialPort

EXAMPLE = Path(__file__).resolve().parents[2] / "contract" / "telemetry-gateway.example.toml"


def test_the_example_documents_every_key_and_loads():
    example = tomllib.loads(EXAMPLE.read_text())
    declared = {section.name: {f.name for f in fields(section.default)} for section in fields(Config)
                if section.name != "alerts"}  # no rules by default: the example shows none
    assert {name: set(keys) for name, keys in example.items()} == declared
    config = load_config(EXAMPLE, env={})
    assert config.serial.ports == (SerialPort("/dev/ttyUSB0", 115200),)
    assert config.cassandra == Config().cassandra  # the example shows the defaults
    assert config.decode == Config().decode


def test_the_examples_commented_rules_load_uncommented(tmp_path):
    """Its [[alerts]] rules at the end, commented: with the first "#" of each of their lines removed, as it says."""
    text = EXAMPLE.read_text()
    mark = text.index("# [[alerts]]")
    (tmp_path / "config.toml").write_text(text[:mark] + "\n".join(line[1:] for line in text[mark:].splitlines()))
    config = load_config(tmp_path / "config.toml", env={})
    assert [(rule.name, rule.kind, rule.command[0]) for rule in config.alerts] == [
        ("frost", "below", "/usr/local/bin/telemetry-alert-webhook"),
        ("heat", "above", "/usr/local/bin/telemetry-alert-webhook"),
        ("board_silent", "silence", "/usr/local/bin/telemetry-alert-webhook")]


def test_environment_then_flags_override_the_file():
    env = {"TELEMETRY_CASSANDRA_HOSTS": "10.0.0.5, 10.0.0.6", "TELEMETRY_SPOOL_MAX_MB": "64",
           "TELEMETRY_CASSANDRA_PORT": "9142", "TELEMETRY_SERIAL_PORTS": "/dev/a,/dev/b@9600"}
    config = load_config(EXAMPLE, env=env, overrides={"cassandra": {"port": 9999}})
    assert config.cassandra.hosts == ("10.0.0.5", "10.0.0.6")
    assert config.spool.max_mb == 64.0
    assert config.cassandra.port == 9999
    assert config.serial.ports == (SerialPort("/dev/a", 115200), SerialPort("/dev/b", 9600))


def test_bad_environment_value_names_the_variable():
    with pytest.raises(ConfigError) as caught:
        load_config(None, env={"TELEMETRY_CASSANDRA_MAX_IN_FLIGHT": "lots"})
    assert str(caught.value) == ("config error at cassandra.max_in_flight [type]: must be a whole number, not \"lots\" "
                                 "(from TELEMETRY_CASSANDRA_MAX_IN_FLIGHT)")


def test_file_errors_say_which_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[cassandra]\nport = 70000\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert str(caught.value) == f"config error at cassandra.port [range]: must be 1..65535, not 70000 (in {path})"


def test_missing_config_file():
    with pytest.raises(ConfigError, match=r"^config error \[unreadable\]: cannot read config /nonexistent.toml"):
        load_config("/nonexistent.toml", env={})


def test_credentials_from_environment_or_file(tmp_path):
    config = load_config(None, env={})
    assert read_credentials(config.cassandra, env={}) is None
    assert read_credentials(config.cassandra, env={"TELEMETRY_CASSANDRA_USERNAME": "gw",
                                                  "TELEMETRY_CASSANDRA_PASSWORD": "pw"}) == ("gw", "pw")
    secret = tmp_path / "credentials.toml"
    secret.write_text('username = "gw"\npassword = "s3cret"\n')
    config = load_config(None, env={"TELEMETRY_CASSANDRA_CREDENTIALS_FILE": str(secret)})
    assert read_credentials(config.cassandra, env={}) == ("gw", "s3cret")
