"""A configuration error as gateway/contract/config.md defines it: the key path, the rule broken, a sentence.

The key path and the rule word are the portable part (the config vectors check them); the sentence and the origin
are for the operator, with the values it quotes written as JSON (quote).
"""

from __future__ import annotations

import json
import math
from typing import Any

from .config_schema import SCHEMA

RULES = tuple(SCHEMA["rules"])  # the rule words an error names


class ConfigError(Exception):
    def __init__(self, key: str, rule: str, text: str, origin: str = "") -> None:
        assert rule in RULES, rule
        super().__init__(key, rule, text, origin)
        self.key, self.rule, self.text, self.origin = key, rule, text, origin

    def __str__(self) -> str:
        where = f" at {self.key}" if self.key else ""
        origin = f" ({self.origin})" if self.origin else ""
        return f"config error{where} [{self.rule}]: {self.text}{origin}"


def quote(value: Any) -> str:
    """A config value in an error's sentence (config.md, Errors): as JSON; a number that is not finite as TOML
    writes it (nan, inf, -inf); a TOML date or time as its ISO 8601 text in quotes."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return json.dumps(value, ensure_ascii=False, default=lambda other: other.isoformat())
