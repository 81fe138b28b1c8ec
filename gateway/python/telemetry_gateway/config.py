"""The gateway's configuration: one TOML file, every key overridable from the environment.

TELEMETRY_<SECTION>_<KEY> overrides [section] key (e.g. TELEMETRY_CASSANDRA_HOSTS=10.0.0.5,10.0.0.6);
command-line flags override both. The rules (types, ranges, errors) are gateway/contract/config.md; the
documented example is gateway/contract/telemetry-gateway.example.toml.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping

from telemetry_cassandra import CredentialsFileError, read_credentials_file

from .config_error import ConfigError
from .serial_port_entries import BAUD_MAX, BAUD_MIN, SerialPort, parse_port_entries, with_baud

CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE", "ANY")

LOG_LEVELS = ("debug", "info", "warning", "error")
_KEYSPACE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")  # an unquoted CQL name, as Cassandra limits keyspaces
_WHOLE_TEXT = re.compile(r"[+-]?[0-9]+")  # numbers written in the environment or a flag
_NUMBER_TEXT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")


@dataclass(frozen=True)
class SerialConfig:
    ports: tuple[SerialPort, ...] = ()  # each with its baud resolved
    baud: int = 115200
    reopen_max_s: float = 10.0


@dataclass(frozen=True)
class DecodeConfig:
    duplicate_window_s: float = 10.0
    max_sources: int = 1000  # per-source state (seqs, receipt stamps, metric labels) kept for this many, LRU


@dataclass(frozen=True)
class TimeConfig:
    max_future_s: float = 60.0
    max_age_days: float = 366.0


@dataclass(frozen=True)
class SpoolConfig:
    path: str = "/var/lib/telemetry-gateway/spool.sqlite"
    fsync: str = "deferred"  # "deferred", "batch" or "interval" (gateway/contract/spool.md, Durability)
    fsync_interval_ms: int = 1000
    max_mb: float = 1024.0
    when_full: str = "pause"  # "pause" or "drop_oldest"


@dataclass(frozen=True)
class CassandraConfig:
    hosts: tuple[str, ...] = ("127.0.0.1",)
    port: int = 9042
    local_dc: str = "datacenter1"
    keyspace: str = "telemetry"
    consistency: str = "LOCAL_QUORUM"
    credentials_file: str = ""
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    batch_rows: int = 250
    max_in_flight: int = 32
    request_timeout_s: float = 10.0
    retry_max_s: float = 10.0


@dataclass(frozen=True)
class MetricsConfig:
    listen: str = "127.0.0.1:9108"  # "" turns the HTTP endpoint off


@dataclass(frozen=True)
class LogConfig:
    level: str = "info"


@dataclass(frozen=True)
class Config:
    serial: SerialConfig = SerialConfig()
    decode: DecodeConfig = DecodeConfig()
    time: TimeConfig = TimeConfig()
    spool: SpoolConfig = SpoolConfig()
    cassandra: CassandraConfig = CassandraConfig()
    metrics: MetricsConfig = MetricsConfig()
    log: LogConfig = LogConfig()


# (section.key): (lowest, highest, lowest excluded). Whole-number and number keys not listed have no range.
RANGES: dict[str, tuple[float, float, bool]] = {
    "serial.baud": (BAUD_MIN, BAUD_MAX, False),
    "serial.reopen_max_s": (0, 3600, True),
    "decode.duplicate_window_s": (0, 3600, False),
    "decode.max_sources": (1, 1_000_000, False),
    "time.max_future_s": (0, 86_400, False),
    "time.max_age_days": (0, 36_600, False),
    "spool.fsync_interval_ms": (1, 60_000, False),
    "spool.max_mb": (0, 1_048_576, True),
    "cassandra.port": (1, 65_535, False),
    "cassandra.batch_rows": (1, 5000, False),
    "cassandra.max_in_flight": (1, 1024, False),
    "cassandra.request_timeout_s": (0, 600, True),
    "cassandra.retry_max_s": (0, 3600, True),
}
CHOICES = {
    "spool.fsync": ("deferred", "batch", "interval"),
    "spool.when_full": ("pause", "drop_oldest"),
    "cassandra.consistency": CONSISTENCY_LEVELS,
    "log.level": LOG_LEVELS,
}
NON_EMPTY = ("spool.path", "cassandra.hosts", "cassandra.local_dc")


def _convert(key: str, value: Any, default: Any, text: bool, origin: str) -> Any:
    """value as the type of default. text: from the environment or a flag, where numbers and lists are written
    as text; in the TOML file a number key needs a TOML number."""
    if isinstance(default, tuple):
        if text and isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        raise ConfigError(key, "type", f"must be a list of strings, not {value!r}", origin)
    if isinstance(default, (int, float)):
        whole = isinstance(default, int)
        if text and isinstance(value, str):
            if not (_WHOLE_TEXT if whole else _NUMBER_TEXT).fullmatch(value.strip()):
                raise ConfigError(key, "type", f"must be {'a whole number' if whole else 'a number'}, not {value!r}",
                                  origin)
            value = int(value) if whole else float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, "type", f"must be {'a whole number' if whole else 'a number'}, not {value!r}",
                              origin)
        if not math.isfinite(value):  # TOML has nan and inf
            raise ConfigError(key, "range", f"must be finite, not {value!r}", origin)
        if whole and not float(value).is_integer():
            raise ConfigError(key, "type", f"must be a whole number, not {value!r}", origin)
        return int(value) if whole else float(value)
    if not isinstance(value, str):
        raise ConfigError(key, "type", f"must be a string, not {value!r}", origin)
    return value


def _check(key: str, value: Any, origin: str) -> Any:
    """The key's own rules (config.md); returns the value resolved (choices in their canonical case)."""
    if key in RANGES:
        low, high, low_excluded = RANGES[key]
        if not (low < value if low_excluded else low <= value) or value > high:
            bounds = f"more than {low} and at most {high}" if low_excluded else f"{low}..{high}"
            raise ConfigError(key, "range", f"must be {bounds}, not {value}", origin)
    if key in CHOICES:
        canonical = {choice.lower(): choice for choice in CHOICES[key]}
        if value.lower() not in canonical:
            raise ConfigError(key, "choice", f"must be one of {', '.join(CHOICES[key])}, not {value!r}", origin)
        value = canonical[value.lower()]  # case-insensitive
    if key in NON_EMPTY and not value:
        raise ConfigError(key, "required", "must not be empty", origin)
    if key == "cassandra.hosts" and not all(value):
        raise ConfigError(key, "syntax", "a contact point is empty", origin)
    if key == "cassandra.keyspace" and not _KEYSPACE.fullmatch(value):
        raise ConfigError(key, "syntax", f"{value!r} is not a plain CQL name ([A-Za-z][A-Za-z0-9_]{{0,47}})",
                          origin)
    if key == "metrics.listen" and value:
        _host, colon, port = value.rpartition(":")
        if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ConfigError(key, "syntax", f"must be HOST:PORT (PORT 1..65535), or \"\" for none, not {value!r}",
                              origin)
    return value


def _check_together(config: Config, origins: Mapping[str, str]) -> None:
    cassandra = config.cassandra
    if bool(cassandra.tls_cert) != bool(cassandra.tls_key):
        missing = "cassandra.tls_key" if cassandra.tls_cert else "cassandra.tls_cert"
        raise ConfigError(missing, "together", "tls_cert and tls_key go together", origins.get(missing, ""))
    if cassandra.tls_cert and not cassandra.tls_ca:
        raise ConfigError("cassandra.tls_ca", "required", "a client certificate (tls_cert) needs tls_ca, the CA the "
                          "node's certificate is verified against", origins.get("cassandra.tls_ca", ""))


def parse_config(data: Mapping[str, Any], env: Mapping[str, str] = os.environ,
                 overrides: Mapping[str, Mapping[str, Any]] | None = None, file: str = "") -> Config:
    """The pure core: a parsed TOML document, then TELEMETRY_* environment, then overrides ({section: {key:
    value}} from flags) → the resolved Config, or the first ConfigError."""
    in_file = f"in {file}" if file else ""
    sections = {}
    origins: dict[str, str] = {}
    known = {f.name for f in fields(Config)}
    for unknown in sorted(set(data) - known):
        raise ConfigError(unknown, "unknown_section", f"there is no [{unknown}]", in_file)
    for section_field in fields(Config):
        section = section_field.name
        defaults = section_field.default
        given = data.get(section, {})
        if not isinstance(given, dict):
            raise ConfigError(section, "type", f"[{section}] must be a table", in_file)
        keys = [f.name for f in fields(defaults)]
        for unknown in sorted(set(given) - set(keys)):
            raise ConfigError(f"{section}.{unknown}", "unknown_key", f"[{section}] has no key {unknown}", in_file)
        values = {}
        for key in keys:
            path = f"{section}.{key}"
            env_name = f"TELEMETRY_{section.upper()}_{key.upper()}"
            if overrides and key in overrides.get(section, {}):
                value, text, origin = overrides[section][key], True, "from the command line"
            elif env_name in env:
                value, text, origin = env[env_name], True, f"from {env_name}"
            elif key in given:
                value, text, origin = given[key], False, in_file
            else:
                continue
            origins[path] = origin
            if path == "serial.ports":
                values[key] = parse_port_entries(value, text, origin)
            else:
                values[key] = _check(path, _convert(path, value, getattr(defaults, key), text, origin), origin)
        sections[section] = type(defaults)(**values)
    serial = sections["serial"]
    sections["serial"] = replace(serial, ports=tuple(with_baud(port, serial.baud) for port in serial.ports))
    config = Config(**sections)
    _check_together(config, origins)
    return config


def load_config(path: str | Path | None, env: Mapping[str, str] = os.environ,
                overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Config:
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


def read_credentials(config: CassandraConfig, env: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """Username and password from TELEMETRY_CASSANDRA_USERNAME/_PASSWORD, or from credentials_file
    (TOML: username = "...", password = "..."). Never from the command line, where `ps` shows them."""
    if env.get("TELEMETRY_CASSANDRA_USERNAME"):
        return env["TELEMETRY_CASSANDRA_USERNAME"], env.get("TELEMETRY_CASSANDRA_PASSWORD", "")
    if not config.credentials_file:
        return None
    try:
        return read_credentials_file(config.credentials_file)
    except CredentialsFileError as error:
        raise ConfigError("cassandra.credentials_file", error.reason, str(error)) from None
