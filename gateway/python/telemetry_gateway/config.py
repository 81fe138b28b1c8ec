"""The gateway's configuration: one TOML file, every key overridable from the environment.

TELEMETRY_<SECTION>_<KEY> overrides [section] key (e.g. TELEMETRY_CASSANDRA_HOSTS=10.0.0.5,10.0.0.6);
command-line flags override both. The documented example is gateway/python/telemetry-gateway.example.toml.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE", "ANY")


class ConfigError(Exception):
    """A configuration problem, said so that the operator knows which key to fix."""


@dataclass(frozen=True)
class SerialConfig:
    ports: tuple[str, ...] = ()  # "/dev/ttyUSB0" or "/dev/ttyUSB0@9600"
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
    fsync: str = "batch"  # "batch" or "interval"
    fsync_interval_ms: int = 200
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


def _convert(section: str, key: str, value: Any, default: Any, from_env: bool) -> Any:
    where = f"[{section}] {key}" + (f" (env TELEMETRY_{section.upper()}_{key.upper()})" if from_env else "")
    try:
        if isinstance(default, tuple):
            items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise TypeError
            return tuple(items)
        if isinstance(default, bool):
            raise TypeError  # no boolean keys yet
        if isinstance(default, int):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise TypeError
            return int(value)
        if isinstance(default, float):
            if isinstance(value, bool):
                raise TypeError
            return float(value)
        if not isinstance(value, str):
            raise TypeError
        return value
    except (TypeError, ValueError):
        kind = {tuple: "a list of strings", int: "a whole number", float: "a number", str: "a string"}[
            type(default) if not isinstance(default, bool) else str]
        raise ConfigError(f"{where} must be {kind}, not {value!r}") from None


def _validate(config: Config) -> None:
    def need(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(message)

    for port in config.serial.ports:
        name, _, baud = port.partition("@")
        need(bool(name) and (not baud or baud.isdigit()), f"[serial] ports: {port!r} is not PATH or PATH@BAUD")
    need(config.serial.baud > 0, "[serial] baud must be positive")
    need(1 <= config.decode.max_sources <= 1_000_000, "[decode] max_sources must be 1..1000000")
    need(config.spool.fsync in ("batch", "interval"), "[spool] fsync must be \"batch\" or \"interval\"")
    need(config.spool.when_full in ("pause", "drop_oldest"), "[spool] when_full must be \"pause\" or \"drop_oldest\"")
    need(config.spool.max_mb > 0 and config.spool.fsync_interval_ms > 0, "[spool] sizes and intervals are positive")
    need(bool(config.cassandra.hosts), "[cassandra] hosts needs at least one contact point")
    need(config.cassandra.consistency.upper() in CONSISTENCY_LEVELS,
         f"[cassandra] consistency must be one of {', '.join(CONSISTENCY_LEVELS)}")
    need(config.cassandra.keyspace.isidentifier(), "[cassandra] keyspace must be a plain CQL identifier")
    need(1 <= config.cassandra.batch_rows <= 5000, "[cassandra] batch_rows must be 1..5000")
    need(1 <= config.cassandra.max_in_flight <= 1024, "[cassandra] max_in_flight must be 1..1024")
    need(bool(config.cassandra.tls_cert) == bool(config.cassandra.tls_key),
         "[cassandra] tls_cert and tls_key go together")
    need(config.log.level.lower() in ("debug", "info", "warning", "error"),
         "[log] level must be debug, info, warning or error")
    if config.metrics.listen:
        host, _, port = config.metrics.listen.rpartition(":")
        need(port.isdigit(), "[metrics] listen must be HOST:PORT, or \"\" for none")


def load_config(path: str | Path | None, env: Mapping[str, str] = os.environ,
                overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Config:
    """File, then TELEMETRY_* environment, then overrides ({section: {key: value}} from flags)."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as error:
            raise ConfigError(f"cannot read config {path}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"config {path} is not valid TOML: {error}") from None

    sections = {}
    known = {f.name for f in fields(Config)}
    for unknown in set(data) - known:
        raise ConfigError(f"unknown section [{unknown}] in {path}")
    for section_field in fields(Config):
        section = section_field.name
        defaults = section_field.default
        given = data.get(section, {})
        if not isinstance(given, dict):
            raise ConfigError(f"[{section}] must be a table")
        keys = {f.name for f in fields(defaults)}
        for unknown in set(given) - keys:
            raise ConfigError(f"unknown key [{section}] {unknown} in {path}")
        values = {}
        for key in keys:
            default = getattr(defaults, key)
            env_name = f"TELEMETRY_{section.upper()}_{key.upper()}"
            if overrides and key in overrides.get(section, {}):
                values[key] = _convert(section, key, overrides[section][key], default, False)
            elif env_name in env:
                values[key] = _convert(section, key, env[env_name], default, True)
            elif key in given:
                values[key] = _convert(section, key, given[key], default, False)
        sections[section] = type(defaults)(**values)
    config = Config(**sections)
    _validate(config)
    return config


def serial_ports(config: SerialConfig) -> list[tuple[str, int]]:
    """(path, baud) of every configured port."""
    result = []
    for port in config.ports:
        path, _, baud = port.partition("@")
        result.append((path, int(baud) if baud else config.baud))
    return result


def read_credentials(config: CassandraConfig, env: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """Username and password from TELEMETRY_CASSANDRA_USERNAME/_PASSWORD, or from credentials_file
    (TOML: username = "...", password = "..."). Never from the command line, where `ps` shows them."""
    if env.get("TELEMETRY_CASSANDRA_USERNAME"):
        return env["TELEMETRY_CASSANDRA_USERNAME"], env.get("TELEMETRY_CASSANDRA_PASSWORD", "")
    if not config.credentials_file:
        return None
    try:
        with open(config.credentials_file, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read credentials_file {config.credentials_file}: {error}") from None
    if not isinstance(data.get("username"), str) or not isinstance(data.get("password"), str):
        raise ConfigError(f"credentials_file {config.credentials_file} needs username and password strings")
    return data["username"], data["password"]
