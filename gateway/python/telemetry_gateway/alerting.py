"""The alert rules in the running gateway (gateway/contract/alerts.md): the ingest hands over each group of accepted
frames, the service's loop ticks the clock; each transition gives its log line, the alerts_firing gauge and the
rule's command. The evaluation itself is alert_states.py (pure); the commands alert_commands.py."""

from __future__ import annotations

import logging
import threading
import time
from typing import Iterable

from .alert_commands import AlertCommands
from .timestamps import iso_ms
from .alert_rules import AlertRule
from .alert_states import FIRING, AlertStates, Transition
from .logs import event
from .metrics import Metrics
from .reading_values import unpack_values
from .spool import NewFrame


class Alerting:
    def __init__(self, rules: tuple[AlertRule, ...], metrics: Metrics, max_sources: int,
                 known: Iterable[str] = (), start_ms: int | None = None) -> None:
        self.active = bool(rules)
        self._metrics = metrics
        self._lock = threading.Lock()  # the ingest thread and the service's loop both feed the states
        self._states = AlertStates(rules, int(time.time() * 1000) if start_ms is None else start_ms, max_sources,
                                   known)
        self._metric_names = self._states.metrics
        self.commands = AlertCommands(rules, on_failure=lambda rule: metrics.alert_command_failures.labels(rule).inc())

    def frames(self, frames: Iterable[NewFrame]) -> None:
        """Accepted frames, in the order they were accepted."""
        with self._lock:
            transitions = []
            for frame in frames:
                values = {}
                if self._metric_names:
                    values = {name: value for name, value in unpack_values(frame.metrics, frame.vals)
                              if name in self._metric_names}
                transitions += self._states.frame(frame.source, frame.ts_ms, frame.received_ms, values)
            self._act(transitions)

    def tick(self, now_ms: int | None = None) -> None:
        with self._lock:
            self._act(self._states.tick(int(time.time() * 1000) if now_ms is None else now_ms))

    def states(self) -> dict[str, list[dict]]:
        """The status page's seam: per source, [{rule, state, since}] sorted by rule, since as ISO UTC or None."""
        with self._lock:
            by_source = self._states.states()
        return {source: sorted(({"rule": item["rule"], "state": item["state"],
                                 "since": None if item["since_ms"] is None else iso_ms(item["since_ms"])}
                                for item in items), key=lambda item: item["rule"])
                for source, items in by_source.items()}

    def stop(self) -> None:
        self.commands.stop()

    def _act(self, transitions: list[Transition]) -> None:
        for rule, source in self._states.take_forgotten():
            self._metrics.alerts_firing.remove(rule, source)
        for t in transitions:
            raised = t.state == FIRING
            event(logging.WARNING if raised else logging.INFO, "alert_raised" if raised else "alert_cleared",
                  rule=t.rule, source=t.source, kind=t.kind, metric=t.metric, value=t.value, threshold=t.threshold,
                  at=t.at)
            self._metrics.alerts_firing.labels(t.rule, t.source).set(1 if raised else 0)
            self.commands.submit(t)
