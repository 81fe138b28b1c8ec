"""The gateway's configuration: one TOML file, every key overridable from the environment.

The keys, their types, defaults, rules and environment variables are gateway/contract/config.schema.json (read by
config_schema); how values are read and refused is gateway/contract/config.md; the documented example is
gateway/contract/telemetry-gateway.example.toml. Flags of `run` and `check` override the environment, which
overrides the file.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import field, make_dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from telemetry_cassandra import CredentialsFileError, read_credentials_file

from .alert_rules import parse_alert_rules
from .config_error import ConfigError
from .config_schema import CREDENTIALS, SECTIONS, default_of
from .config_values import check_value as _check, convert_value as _convert
from .serial_port_entries import parse_port_entries, with_baud
from .signing_config import check_signing

def _section_class(name: str) -> type:
    """A frozen dataclass of the section's keys, each with the schema's default."""
    keys = [(key, Any, field(default=default_of(declared))) for key, declared in SECTIONS[name].items()]
    return make_dataclass(f"{name.capitalize()}Config", keys, frozen=True)


SerialConfig = _section_class("serial")  # ports: SerialPort entries, each with its baud resolved
DecodeConfig = _section_class("decode")
TimeConfig = _section_class("time")
SpoolConfig = _section_class("spool")
CassandraConfig = _section_class("cassandra")
MetricsConfig = _section_class("metrics")
LogConfig = _section_class("log")
SigningConfig = _section_class("signing")
_CLASSES = {"serial": SerialConfig, "decode": DecodeConfig, "time": TimeConfig, "spool": SpoolConfig,
            "cassandra": CassandraConfig, "metrics": MetricsConfig, "log": LogConfig, "signing": SigningConfig}
assert list(_CLASSES) == list(SECTIONS), "a section of config.schema.json has no class here"
# alerts: the [[alerts]] rules (alert_rules.AlertRule), file only.
Config = make_dataclass("Config", [(name, cls, field(default=cls())) for name, cls in _CLASSES.items()]
                        + [("alerts", tuple, field(default=()))], frozen=True)


def _check_cross_key(config: Any, origins: Mapping[str, str]) -> None:
    """The schema's cross_key rules on the TLS keys and [signing] (the port entries check their own)."""
    check_signing(config, origins)
    cassandra = config.cassandra
    if bool(cassandra.tls_cert) != bool(cassandra.tls_key):
        missing = "cassandra.tls_key" if cassandra.tls_cert else "cassandra.tls_cert"
        raise ConfigError(missing, "together", "tls_cert and tls_key go together", origins.get(missing, ""))
    if cassandra.tls_cert and not cassandra.tls_ca:
        raise ConfigError("cassandra.tls_ca", "required", "a client certificate (tls_cert) needs tls_ca, the CA the "
                          "node's certificate is verified against", origins.get("cassandra.tls_ca", ""))


def parse_config(data: Mapping[str, Any], env: Mapping[str, str] = os.environ,
                 overrides: Mapping[str, Mapping[str, Any]] | None = None, file: str = "") -> Any:
    """The pure core: a parsed TOML document, then TELEMETRY_* environment, then overrides ({section: {key:
    value}} from flags) → the resolved Config, or the first ConfigError."""
    in_file = f"in {file}" if file else ""
    sections = {}
    origins: dict[str, str] = {}
    for unknown in sorted(set(data) - set(SECTIONS) - {"alerts"}):
        raise ConfigError(unknown, "unknown_section", f"there is no [{unknown}]", in_file)
    for section, keys in SECTIONS.items():
        given = data.get(section, {})
        if not isinstance(given, dict):
            raise ConfigError(section, "type", f"[{section}] must be a table", in_file)
        for unknown in sorted(set(given) - set(keys)):
            raise ConfigError(f"{section}.{unknown}", "unknown_key", f"[{section}] has no key {unknown}", in_file)
        values = {}
        for key, declared in keys.items():
            path = f"{section}.{key}"
            if overrides and key in overrides.get(section, {}):
                value, text, origin = overrides[section][key], True, "from the command line"
            elif declared["env"] in env:  # set but empty counts as set
                value, text, origin = env[declared["env"]], True, f"from {declared['env']}"
            elif key in given:
                value, text, origin = given[key], False, in_file
            else:
                continue
            origins[path] = origin
            if declared["type"] == "ports":
                values[key] = parse_port_entries(value, text, origin)
            else:
                values[key] = _check(path, declared, _convert(path, declared, value, text, origin), origin)
        sections[section] = _CLASSES[section](**values)
    serial = sections["serial"]
    sections["serial"] = replace(serial, ports=tuple(with_baud(port, serial.baud) for port in serial.ports))
    config = Config(**sections, alerts=parse_alert_rules(data.get("alerts", []), in_file))
    _check_cross_key(config, origins)
    return config


def load_config(path: str | Path | None, env: Mapping[str, str] = os.environ,
                overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Any:
    """The file (if any), then TELEMETRY_* environment, then overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as error:
            raise ConfigError("", "unreadable", f"cannot read config {path}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError("", "toml_syntax", f"config {path} is not valid TOML: {error}") from None
        except UnicodeDecodeError:
            raise ConfigError("", "toml_syntax", f"config {path} is not valid TOML: Not UTF-8 text") from None
    return parse_config(data, env, overrides, str(path) if path is not None else "")


def check_credentials_mode(config: Any, env: Mapping[str, str] = os.environ) -> None:
    """At start, as for the keys file (signing.md): a credentials_file the group or others may use is a config
    error naming the file, never its content. Its content is read at connect (a file missing now is that read's
    problem, retried there)."""
    if env.get(CREDENTIALS["username_env"]) or not config.credentials_file:
        return
    try:
        mode = os.stat(config.credentials_file).st_mode
    except OSError:
        return
    if mode & 0o077:
        raise ConfigError("cassandra.credentials_file", "unreadable", f"credentials_file {config.credentials_file}: "
                          f"mode {mode & 0o7777:04o}: group or others may use it; chmod 600 it")


def read_credentials(config: Any, env: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """Username and password from the schema's credentials variables, or from credentials_file (TOML: username =
    "...", password = "..."). Never from the command line, where `ps` shows them."""
    if env.get(CREDENTIALS["username_env"]):
        return env[CREDENTIALS["username_env"]], env.get(CREDENTIALS["password_env"], "")
    if not config.credentials_file:
        return None
    try:
        return read_credentials_file(config.credentials_file)
    except CredentialsFileError as error:
        raise ConfigError("cassandra.credentials_file", error.reason, str(error)) from None


__all__ = ["CassandraConfig", "Config", "ConfigError", "DecodeConfig", "LogConfig", "MetricsConfig", "SerialConfig",
           "SpoolConfig", "TimeConfig", "load_config", "parse_config", "read_credentials"]
