"""The config keys as the contract declares them (gateway/contract/config.schema.json, installed as
telemetry_gateway/contract/config.schema.json): every section and key with its type, default, rules and
environment variable. The config loader and the port entries take everything per key from here."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

SCHEMA: dict[str, Any] = json.loads(
    files(__package__).joinpath("contract", "config.schema.json").read_text(encoding="utf-8"))

# section -> key -> declaration (type, default, min/above/max, choices, not_empty, items_not_empty, pattern, form,
# env, secret, unit, meaning), in the schema's order.
SECTIONS: dict[str, dict[str, dict[str, Any]]] = {
    name: section["keys"] for name, section in SCHEMA["sections"].items()}
PORT_TABLE: dict[str, dict[str, Any]] = SCHEMA["port_table"]
ALERT_TABLE: dict[str, dict[str, Any]] = SCHEMA["alert_table"]  # the keys of an [[alerts]] table
CREDENTIALS: dict[str, Any] = SCHEMA["credentials"]


def default_of(declaration: dict[str, Any]) -> Any:
    """The key's default as the resolved config holds it: lists as tuples, numbers of type number as floats."""
    value = declaration["default"]
    if isinstance(value, list):
        return tuple(value)
    return float(value) if declaration["type"] == "number" else value
