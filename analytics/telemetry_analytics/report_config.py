"""The report's configuration file (TOML): roles of metrics, cold threshold, night hours."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import time
from pathlib import Path

from .local_days import BadInput


@dataclass(frozen=True)
class ReportConfig:
    inside: str = "temp_in"
    outside: str = "temp_out"
    unit: str = "°C"
    cold_threshold: float = 2.0
    night_start: time = time(18, 0)
    night_end: time = time(8, 0)
    sources: tuple[str, ...] = field(default_factory=tuple)


def _clock(name: str, text: object) -> time:
    try:
        return time.fromisoformat(str(text))
    except ValueError:
        raise BadInput(f"report config: {name} must be HH:MM, not {text!r}") from None


def parse_config(text: str, origin: str = "report config") -> ReportConfig:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadInput(f"{origin}: {error}") from None
    known = {"inside", "outside", "unit", "cold_threshold", "night_start", "night_end", "sources"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise BadInput(f"{origin}: unknown setting(s) {', '.join(unknown)}")
    try:
        threshold = float(raw.get("cold_threshold", 2.0))
    except (TypeError, ValueError):
        raise BadInput(f"{origin}: cold_threshold must be a number") from None
    sources = raw.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise BadInput(f"{origin}: sources must be a list of names")
    start, end = _clock("night_start", raw.get("night_start", "18:00")), _clock("night_end", raw.get("night_end", "08:00"))
    if end > start:
        raise BadInput(f"{origin}: a night must cross midnight (night_end before night_start)")
    return ReportConfig(str(raw.get("inside", "temp_in")), str(raw.get("outside", "temp_out")),
                        str(raw.get("unit", "°C")), threshold, start, end, tuple(sources))


def load_config(path: Path) -> ReportConfig:
    return parse_config(path.read_text(encoding="utf-8"), str(path))
