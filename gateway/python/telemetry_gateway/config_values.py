"""One config value against its declaration in config.schema.json: its type (convert_value), then its own rules
(check_value). Used for section keys and for the keys of an [[alerts]] table."""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from .config_error import ConfigError, quote

_WHOLE_TEXT = re.compile(r"[+-]?[0-9]+")  # numbers written in the environment or a flag
_NUMBER_TEXT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")


def convert_value(key: str, declared: Mapping[str, Any], value: Any, text: bool, origin: str) -> Any:
    """value as the key's type. text: from the environment or a flag, where numbers and lists are written as
    text; in the TOML file a number key needs a TOML number."""
    kind = declared["type"]
    if kind == "strings":
        if text and isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        raise ConfigError(key, "type", f"must be a list of strings, not {quote(value)}", origin)
    if kind in ("whole", "number"):
        whole = kind == "whole"
        wanted = "a whole number" if whole else "a number"
        if text and isinstance(value, str):
            if not (_WHOLE_TEXT if whole else _NUMBER_TEXT).fullmatch(value.strip()):
                raise ConfigError(key, "type", f"must be {wanted}, not {quote(value)}", origin)
            value = int(value) if whole else float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, "type", f"must be {wanted}, not {quote(value)}", origin)
        if not math.isfinite(value):  # TOML has nan and inf
            raise ConfigError(key, "range", f"must be finite, not {quote(value)}", origin)
        if whole and not float(value).is_integer():
            raise ConfigError(key, "type", f"must be a whole number, not {quote(value)}", origin)
        return int(value) if whole else float(value)
    if not isinstance(value, str):
        raise ConfigError(key, "type", f"must be a string, not {quote(value)}", origin)
    return value


def check_value(key: str, declared: Mapping[str, Any], value: Any, origin: str) -> Any:
    """The key's own rules from the schema; returns the value resolved (a choice in the case declared)."""
    low, high = declared.get("above", declared.get("min")), declared.get("max")
    if low is not None and not (low < value if "above" in declared else low <= value) or (
            high is not None and value > high):
        bounds = f"more than {low} and at most {high}" if "above" in declared else f"{low}..{high}"
        raise ConfigError(key, "range", f"must be {bounds}, not {quote(value)}", origin)
    if "choices" in declared:
        canonical = {choice.lower(): choice for choice in declared["choices"]}
        if value.lower() not in canonical:
            raise ConfigError(key, "choice", f"must be one of {', '.join(declared['choices'])}, not {quote(value)}",
                              origin)
        value = canonical[value.lower()]
    if declared.get("not_empty") and not value:
        raise ConfigError(key, "required", "must not be empty", origin)
    if declared.get("items_not_empty") and not all(value):
        raise ConfigError(key, "syntax", "an item is empty", origin)
    for index, item in enumerate(value if "item_pattern" in declared else ()):
        if not re.fullmatch(declared["item_pattern"], item):
            raise ConfigError(f"{key}[{index}]", "syntax", f"{quote(item)} does not match {declared['item_pattern']}",
                              origin)
    if "pattern" in declared and not re.fullmatch(declared["pattern"], value):
        raise ConfigError(key, "syntax", f"{quote(value)} does not match {declared['pattern']}", origin)
    if declared.get("form") == "host_port" and value:
        _host, colon, port = value.rpartition(":")
        if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ConfigError(key, "syntax", f"must be HOST:PORT (PORT 1..65535), or \"\" for none, not {quote(value)}",
                              origin)
    return value
