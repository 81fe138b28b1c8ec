"""The configuration contract: the example file documents every key, env and flags override, errors are clear."""

import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from telemetry_gateway.config import Config, ConfigError, load_config, read_credentials, serial_ports

EXAMPLE = Path(__file__).resolve().parents[1] / "telemetry-gateway.example.toml"


def test_the_example_documents_every_key_and_loads():
    example = tomllib.loads(EXAMPLE.read_text())
    declared = {section.name: {f.name for f in fields(section.default)} for section in fields(Config)}
    assert {name: set(keys) for name, keys in example.items()} == declared
    config = load_config(EXAMPLE, env={})
    assert config.serial.ports == ("/dev/ttyUSB0",)
    assert config.cassandra == Config().cassandra  # the example shows the defaults
    assert config.decode == Config().decode


def test_environment_then_flags_override_the_file():
    env = {"TELEMETRY_CASSANDRA_HOSTS": "10.0.0.5, 10.0.0.6", "TELEMETRY_SPOOL_MAX_MB": "64",
           "TELEMETRY_CASSANDRA_PORT": "9142", "TELEMETRY_SERIAL_PORTS": "/dev/a,/dev/b@9600"}
    config = load_config(EXAMPLE, env=env, overrides={"cassandra": {"port": 9999}})
    assert config.cassandra.hosts == ("10.0.0.5", "10.0.0.6")
    assert config.spool.max_mb == 64.0
    assert config.cassandra.port == 9999
    assert serial_ports(config.serial) == [("/dev/a", 115200), ("/dev/b", 9600)]


@pytest.mark.parametrize("text,message", [
    ("[cassandra]\nport = \"x\"", r"\[cassandra\] port must be a whole number"),
    ("[spool]\nfsync = \"sometimes\"", "fsync must be"),
    ("[spool]\nwhen_full = \"explode\"", "when_full must be"),
    ("[nope]\na = 1", r"unknown section \[nope\]"),
    ("[serial]\nspeed = 1", r"unknown key \[serial\] speed"),
    ("[cassandra]\nconsistency = \"MOST\"", "consistency must be one of"),
    ("[cassandra]\ntls_cert = \"c.pem\"", "tls_cert and tls_key go together"),
    ("[serial]\nports = [\"/dev/x@fast\"]", "not PATH or PATH@BAUD"),
    ("[serial\nports", "not valid TOML"),
    ("[decode]\nmax_sources = 0", r"\[decode\] max_sources must be 1..1000000"),
])
def test_bad_configs_say_which_key(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path, env={})


def test_bad_environment_value_names_the_variable():
    with pytest.raises(ConfigError, match="TELEMETRY_CASSANDRA_MAX_IN_FLIGHT"):
        load_config(None, env={"TELEMETRY_CASSANDRA_MAX_IN_FLIGHT": "lots"})


def test_missing_config_file():
    with pytest.raises(ConfigError, match="cannot read config /nonexistent.toml"):
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
