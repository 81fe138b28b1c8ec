"""[[alerts]] rules (gateway/contract/config.md, "[[alerts]] rules"): a threshold rule (metric below or above a
value, for a while, with a clear_at band) or a silence rule (a source silent for silent_s). The keys' types and
ranges come from the schema's alert_table; the rules that tie them together are here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config_error import ConfigError, quote
from .config_schema import ALERT_TABLE
from .config_values import check_value, convert_value
from .frame import is_metric_key

KINDS = ("below", "above", "silent_s")  # exactly one of them makes the rule
THRESHOLD_ONLY = tuple(key for key, declared in ALERT_TABLE.items() if declared.get("threshold_only"))


@dataclass(frozen=True)
class AlertRule:
    name: str
    source: str = "*"  # "*": every source, each judged on its own
    metric: str = ""
    below: float | None = None
    above: float | None = None
    clear_at: float | None = None  # resolved: the threshold when not given; None for silence
    for_s: float = 0.0
    silent_s: float | None = None
    command: tuple[str, ...] = ()
    command_timeout_s: float = 10.0

    @property
    def kind(self) -> str:
        """below, above or silence: the word logs, vectors and ALERT_KIND use."""
        return "silence" if self.silent_s is not None else ("below" if self.below is not None else "above")

    @property
    def threshold(self) -> float:
        return next(value for value in (self.below, self.above, self.silent_s) if value is not None)


def parse_alert_rules(value: Any, origin: str) -> tuple[AlertRule, ...]:
    """The file's `alerts` (a list of tables) → the rules, or the first ConfigError."""
    if not isinstance(value, list):
        raise ConfigError("alerts", "type", f"must be a list of [[alerts]] tables, not {quote(value)}", origin)
    rules: list[AlertRule] = []
    for index, item in enumerate(value):
        key = f"alerts[{index}]"
        if not isinstance(item, dict):
            raise ConfigError(key, "type", f"must be an [[alerts]] table, not {quote(item)}", origin)
        rule = _rule(item, key, origin)
        if any(other.name == rule.name for other in rules):
            raise ConfigError(f"{key}.name", "distinct", f"another rule is named {quote(rule.name)}", origin)
        rules.append(rule)
    return tuple(rules)


def _rule(item: dict, key: str, origin: str) -> AlertRule:
    for name in item:
        if name not in ALERT_TABLE:
            raise ConfigError(f"{key}.{name}", "unknown_key", f"an alert table has {', '.join(ALERT_TABLE)}", origin)
    values: dict[str, Any] = {}
    for name, declared in ALERT_TABLE.items():
        if name in item:
            path = f"{key}.{name}"
            values[name] = check_value(path, declared, convert_value(path, declared, item[name], False, origin),
                                       origin)
    if not values.get("name"):
        raise ConfigError(f"{key}.name", "required", "an alert rule needs a name", origin)
    kinds = [name for name in KINDS if name in values]
    if not kinds:
        raise ConfigError(key, "required", "an alert rule needs below, above or silent_s", origin)
    if len(kinds) > 1:
        raise ConfigError(f"{key}.{kinds[1]}", "conflict", f"a rule has one of below, above, silent_s, not "
                          f"{' and '.join(kinds)}", origin)
    if kinds[0] == "silent_s":
        for name in THRESHOLD_ONLY:
            if name in values:
                raise ConfigError(f"{key}.{name}", "conflict", f"a silence rule (silent_s) has no {name}", origin)
        return AlertRule(**values)
    metric = values.get("metric", "")
    if not metric:
        raise ConfigError(f"{key}.metric", "required", f"a rule with {kinds[0]} needs the metric it compares", origin)
    if not is_metric_key(metric):
        raise ConfigError(f"{key}.metric", "syntax", f"{quote(metric)} is not a metric name ([a-z][a-z0-9_]{{0,15}}, "
                          "not t)", origin)
    threshold = values[kinds[0]]
    clear_at = values.setdefault("clear_at", threshold)
    if clear_at < threshold if kinds[0] == "below" else clear_at > threshold:
        side = "at or above below" if kinds[0] == "below" else "at or below above"
        raise ConfigError(f"{key}.clear_at", "range", f"must be {side} ({quote(threshold)}), not {quote(clear_at)}",
                          origin)
    return AlertRule(**values)
