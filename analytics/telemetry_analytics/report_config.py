"""The report's configuration file (TOML): roles of metrics, thresholds, night hours, sample periods, units."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from datetime import time
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .local_days import BadInput

# The metric names of firmware/protocol/PROTOCOL.md, section 1, and their units; the [units] table adds or overrides.
DEFAULT_UNITS = MappingProxyType({"temp_in": "°C", "temp_out": "°C", "temp_check": "°C", "temp": "°C",
                                  "humidity": "%RH", "light": "0–100", "vbat": "V"})

ROLES = ("inside", "outside", "humidity", "battery", "compare_metric")
NUMBERS = ("cold_threshold", "frost_below", "heat_above", "humidity_above", "low_battery_v")


@dataclass(frozen=True)
class ReportConfig:
    inside: str = "temp_in"
    outside: str = "temp_out"
    humidity: str = "humidity"
    battery: str = "vbat"
    compare_metric: str = "temp_in"
    cold_threshold: float = 2.0     # a night is cold when outside drops below this
    frost_below: float = 0.0        # inside frost
    heat_above: float = 35.0        # inside heat stress
    humidity_above: float = 90.0    # humidity risk
    low_battery_v: float = 3.0
    sample_period_s: float | None = None  # every source's period; None: each source's observed one
    night_start: time = time(18, 0)
    night_end: time = time(8, 0)
    sources: tuple[str, ...] = field(default_factory=tuple)
    units: Mapping[str, str] = field(default_factory=lambda: DEFAULT_UNITS)
    sample_periods: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))  # per source

    def unit(self, metric: str) -> str:
        return self.units.get(metric, "")


def _clock(origin: str, name: str, text: object) -> time:
    try:
        return time.fromisoformat(str(text))
    except ValueError:
        raise BadInput(f"{origin}: {name} must be HH:MM, not {text!r}") from None


def _number(origin: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{origin}: {name} must be a number, not {value!r}")
    return float(value)


def _period(origin: str, name: str, value: object) -> float:
    if _number(origin, name, value) <= 0:
        raise BadInput(f"{origin}: {name} must be > 0")
    return float(value)


def parse_config(text: str, origin: str = "report config") -> ReportConfig:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadInput(f"{origin}: {error}") from None
    known = {*ROLES, *NUMBERS, "sample_period_s", "sample_periods", "night_start", "night_end", "sources", "units"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise BadInput(f"{origin}: unknown setting(s) {', '.join(unknown)}")
    values: dict = {}
    for name in ROLES:
        if name in raw:
            if not isinstance(raw[name], str) or not raw[name]:
                raise BadInput(f"{origin}: {name} must be a metric name")
            values[name] = raw[name]
    for name in NUMBERS:
        if name in raw:
            values[name] = _number(origin, name, raw[name])
    if "sample_period_s" in raw:
        values["sample_period_s"] = _period(origin, "sample_period_s", raw["sample_period_s"])
    periods = raw.get("sample_periods", {})
    if not isinstance(periods, dict):
        raise BadInput(f"{origin}: sample_periods must be a table of source = seconds")
    periods = {source: _period(origin, f"sample_periods.{source}", v) for source, v in periods.items()}
    sources = raw.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise BadInput(f"{origin}: sources must be a list of names")
    units = raw.get("units", {})
    if not isinstance(units, dict) or not all(isinstance(u, str) for u in units.values()):
        raise BadInput(f'{origin}: units must be a table of metric = "unit"')
    start = _clock(origin, "night_start", raw.get("night_start", "18:00"))
    end = _clock(origin, "night_end", raw.get("night_end", "08:00"))
    if end > start:
        raise BadInput(f"{origin}: a night must cross midnight (night_end before night_start)")
    return ReportConfig(**values, night_start=start, night_end=end, sources=tuple(sources),
                        units=MappingProxyType({**DEFAULT_UNITS, **units}), sample_periods=MappingProxyType(periods))


def load_config(path: Path) -> ReportConfig:
    return parse_config(path.read_text(encoding="utf-8"), str(path))
