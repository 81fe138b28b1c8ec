"""[serial] ports entries (gateway/contract/config.md): "PATH", "PATH@BAUD", or a table that may make the port a
CSV port (the room board's `light,temperature` lines, PROTOCOL.md section 7)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .config_error import ConfigError, quote
from .config_schema import PORT_TABLE
from .frame import is_metric_key, is_source_name

FORMATS = tuple(PORT_TABLE["format"]["choices"])  # auto: v1 frames, status lines and legacy JSON, told apart per line
BAUD_MIN, BAUD_MAX = PORT_TABLE["baud"]["min"], PORT_TABLE["baud"]["max"]
_PATH_AT_BAUD = re.compile(r"([^@]+)(?:@([0-9]+))?")
_TABLE_KEYS = tuple(PORT_TABLE)


@dataclass(frozen=True)
class SerialPort:
    path: str
    baud: int | None = None  # None: [serial] baud (resolved by the config loader)
    format: str = "auto"
    source: str = ""  # csv: the source its lines are stored under
    columns: tuple[str, ...] = ()  # csv: the metric of each field, in line order
    trusted: bool = False  # signing.md, "Trusted inputs": one board wired to it; a csv port's default is True


def parse_port_entries(value: Any, text: bool, origin: str) -> tuple[SerialPort, ...]:
    """text: the value came from the environment or a flag (comma-separated, or a list of strings)."""
    if text and isinstance(value, str):
        value = [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, list):
        raise ConfigError("serial.ports", "type", f"must be a list of ports, not {quote(value)}", origin)
    ports: list[SerialPort] = []
    for index, item in enumerate(value):
        key = f"serial.ports[{index}]"
        if isinstance(item, str):
            port = _from_string(item, key, origin)
        elif isinstance(item, dict) and not text:
            port = _from_table(item, key, origin)
        else:
            raise ConfigError(key, "type", f"must be \"PATH\", \"PATH@BAUD\" or a table, not {quote(item)}", origin)
        _check_distinct(port, ports, key, isinstance(item, dict), origin)
        ports.append(port)
    return tuple(ports)


def _from_string(item: str, key: str, origin: str) -> SerialPort:
    match = _PATH_AT_BAUD.fullmatch(item)
    if match is None:
        raise ConfigError(key, "syntax", f"{quote(item)} is not \"PATH\" or \"PATH@BAUD\"", origin)
    baud = match[2]
    if baud is not None:
        _check_baud(int(baud), key, origin)
    return SerialPort(match[1], int(baud) if baud is not None else None)


def _from_table(item: dict, key: str, origin: str) -> SerialPort:
    for name in item:
        if name not in _TABLE_KEYS:
            raise ConfigError(f"{key}.{name}", "unknown_key", f"a port table has {', '.join(_TABLE_KEYS)}", origin)
    path = item.get("path")
    if path is None or path == "":
        raise ConfigError(f"{key}.path", "required", "a port table needs a path", origin)
    if not isinstance(path, str):
        raise ConfigError(f"{key}.path", "type", f"must be a string, not {quote(path)}", origin)
    baud = item.get("baud")
    if baud is not None:
        if isinstance(baud, bool) or not isinstance(baud, (int, float)) or not float(baud).is_integer():
            raise ConfigError(f"{key}.baud", "type", f"must be a whole number, not {quote(baud)}", origin)
        baud = int(baud)
        _check_baud(baud, f"{key}.baud", origin)
    form = item.get("format", "auto")
    if not isinstance(form, str) or form.lower() not in FORMATS:  # case-insensitive, as every choice
        raise ConfigError(f"{key}.format", "choice", f"must be one of {', '.join(FORMATS)}, not {quote(form)}", origin)
    form = form.lower()
    trusted = item.get("trusted", form == "csv")  # the room board's CSV has no signed form and names no source
    if not isinstance(trusted, bool):
        raise ConfigError(f"{key}.trusted", "type", f"must be true or false, not {quote(trusted)}", origin)
    if form == "auto":
        for name in ("source", "columns"):
            if name in item:
                raise ConfigError(f"{key}.{name}", "conflict", f"only a format = \"csv\" port has {name}", origin)
        return SerialPort(path, baud, trusted=trusted)
    return SerialPort(path, baud, form, _csv_source(item, key, origin), _csv_columns(item, key, origin), trusted)


def _csv_source(item: dict, key: str, origin: str) -> str:
    source = item.get("source")
    if source is None:
        raise ConfigError(f"{key}.source", "required", "a csv port needs the source its lines are stored under",
                          origin)
    if not isinstance(source, str) or not is_source_name(source):
        raise ConfigError(f"{key}.source", "syntax", f"{quote(source)} is not a source name ([A-Za-z0-9_-]{{1,32}})",
                          origin)
    return source


def _csv_columns(item: dict, key: str, origin: str) -> tuple[str, ...]:
    columns = item.get("columns")
    if columns is None or columns == []:
        raise ConfigError(f"{key}.columns", "required", "a csv port needs the metric name of each field", origin)
    if not isinstance(columns, list):
        raise ConfigError(f"{key}.columns", "type", f"must be a list of metric names, not {quote(columns)}", origin)
    for index, column in enumerate(columns):
        where = f"{key}.columns[{index}]"
        if not isinstance(column, str) or not is_metric_key(column):
            raise ConfigError(where, "syntax", f"{quote(column)} is not a metric name ([a-z][a-z0-9_]{{0,15}}, not t)",
                              origin)
        if column in columns[:index]:
            raise ConfigError(where, "distinct", f"{quote(column)} is listed twice", origin)
    return tuple(columns)


def _check_baud(baud: int, key: str, origin: str) -> None:
    if not BAUD_MIN <= baud <= BAUD_MAX:
        raise ConfigError(key, "range", f"baud must be {BAUD_MIN}..{BAUD_MAX}, not {baud}", origin)


def _check_distinct(port: SerialPort, earlier: list[SerialPort], key: str, table: bool, origin: str) -> None:
    """One device read by two entries would split its lines between two readers; two CSV ports with one source
    would interleave two boards' readings under one name."""
    if any(other.path == port.path for other in earlier):
        raise ConfigError(f"{key}.path" if table else key, "distinct", f"{port.path} is listed twice", origin)
    if port.format == "csv" and any(o.format == "csv" and o.source == port.source for o in earlier):
        raise ConfigError(f"{key}.source", "distinct", f"another csv port already stores as {quote(port.source)}",
                          origin)


def with_baud(port: SerialPort, default_baud: int) -> SerialPort:
    return port if port.baud is not None else replace(port, baud=default_baud)
