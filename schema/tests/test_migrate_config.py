"""migrate --config: where the schema goes, from a gateway's config, under the environment and the flags."""

from pathlib import Path

import pytest

from telemetry_schema import migrate
from telemetry_schema.gateway_config import config_env


def test_config_env_maps_the_cassandra_keys_and_skips_empty_ones():
    assert config_env({"hosts": ["10.0.0.5", "10.0.0.6"], "port": 9142, "keyspace": "farm",
                       "credentials_file": "", "tls_ca": "/etc/ca.crt", "consistency": "ONE"}) == {
        "TELEMETRY_CASSANDRA_HOSTS": "10.0.0.5,10.0.0.6", "TELEMETRY_CASSANDRA_PORT": "9142",
        "TELEMETRY_CASSANDRA_KEYSPACE": "farm", "TELEMETRY_CASSANDRA_TLS_CA": "/etc/ca.crt"}


def test_the_environment_and_flags_override_the_config(tmp_path: Path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[cassandra]\nhosts = ["10.0.0.5"]\nkeyspace = "farm"\nport = 9142\n'
                      'credentials_file = "/etc/telemetry-gateway/credentials.toml"\n')
    for name in ("HOSTS", "PORT", "KEYSPACE", "CREDENTIALS_FILE", "USERNAME", "PASSWORD"):
        monkeypatch.delenv(f"TELEMETRY_CASSANDRA_{name}", raising=False)
    monkeypatch.setenv("TELEMETRY_CASSANDRA_KEYSPACE", "other")
    monkeypatch.setenv("TELEMETRY_CASSANDRA_PORT", "")  # empty counts as unset
    args = migrate.parse_args(["--config", str(config), "--port", "9042"])
    assert (args.hosts, args.port, args.keyspace) == ("10.0.0.5", 9042, "other")
    assert args.environment["TELEMETRY_CASSANDRA_CREDENTIALS_FILE"] == "/etc/telemetry-gateway/credentials.toml"


def test_an_unreadable_config_is_a_usage_error(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_:
        migrate.parse_args(["--config", str(tmp_path / "missing.toml")])
    assert exit_.value.code == 2 and "cannot read --config" in capsys.readouterr().err
