"""The status page's data at request time (gateway/contract/status.md): the shell around status_document, reading
the tally, the spool, the sender and the metrics of the running gateway."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import json
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files

from .config import MetricsConfig
from .healthz import HealthLimits, HealthState, health
from .metrics import Metrics
from .reading_values import unpack_values
from .status_document import GatewayFacts, Moment, status_document
from .status_tally import SourceTally

UNITS: dict[str, str] = json.loads(files(__package__).joinpath("contract", "metric-units.json")
                                   .read_text(encoding="utf-8"))["units"]
PAGE: bytes = files(__package__).joinpath("contract", "status.html").read_bytes()

# The seam to the alert rules: source -> the rule states of status.schema.json's alerts items ({} without rules).
AlertStates = Callable[[], Mapping[str, Sequence[Mapping]]]


@dataclass
class StatusPage:
    facts: GatewayFacts
    tally: SourceTally
    spool: object  # the Spool: depth, held_frames, oldest_received_ms()
    last_error: Callable[[], tuple | None]  # the sender's (error kind, wall ms)
    metrics: Metrics
    alert_states: AlertStates = dict
    metrics_config: MetricsConfig = MetricsConfig()  # [metrics]: /healthz's thresholds
    down_since: Callable[[], int | None] = lambda: None  # the sender's: since when Cassandra is down

    def document(self) -> dict:
        now_ms = time.time_ns() // 1_000_000
        with self.tally.lock:
            views = self.tally.view(now_ms)
            series = self.tally.series.view(now_ms)
        views = [dataclasses.replace(view, values=unpack_values(*view.values) if view.values else ())
                 for view in views]
        moment = Moment(now_ms, self._rejects(), self.spool.depth, self.spool.held_frames, self._oldest(),
                        self._value(self.metrics.cassandra_up) == 1, self.last_error())
        return status_document(self.facts, moment, views, self.alert_states(), UNITS, series)

    def health(self) -> tuple[int, str]:
        """/healthz: 200 ok or 503 with the first failed check's reason."""
        now_ms = time.time_ns() // 1_000_000
        with self.tally.lock:
            seen = self.tally.last_seen_ms()
        config = self.metrics_config
        limits = HealthLimits(config.healthz_cassandra_down_s * 1000, config.healthz_spool_lag_s * 1000,
                              config.stale_after_s * 1000)
        state = HealthState(now_ms, self.facts.started_ms, self.down_since(), self._oldest(),
                            max(seen.values(), default=None))
        return health(state, limits)

    def _oldest(self) -> int | None:
        try:
            return self.spool.oldest_received_ms()
        except sqlite3.Error:  # the spool closing at stop
            return None

    def _rejects(self) -> dict[str, int]:
        return {sample.labels["reason"]: int(sample.value) for family in self.metrics.rejects.collect()
                for sample in family.samples if sample.name.endswith("_total")}

    @staticmethod
    def _value(gauge) -> float:
        return next((sample.value for family in gauge.collect() for sample in family.samples), 0.0)
