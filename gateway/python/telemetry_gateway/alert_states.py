"""The alert rules' evaluation (gateway/contract/alerts.md), pure: accepted frames and clock ticks in, transitions
out. Per (rule, source) a state machine ok -> pending -> firing -> ok; threshold rules on reading time, silence
rules on the gateway's clock. No I/O and no clock of its own: alerting.py feeds it and acts on its transitions."""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable, Mapping, NamedTuple

from .alert_rules import AlertRule

OK, PENDING, FIRING = "ok", "pending", "firing"


class Transition(NamedTuple):
    rule: str
    source: str
    state: str  # firing (raised) or ok (cleared)
    kind: str  # below, above or silence
    metric: str | None  # None for silence
    value: float
    threshold: float
    at: int  # ms: the reading's ts, or the clock


class PairState:
    """One (rule, source): its state, since when (ms), and the time that moves it (last ts judged, or last heard)."""
    __slots__ = ("state", "since", "last")

    def __init__(self, last: int) -> None:
        self.state, self.since, self.last = OK, None, last


class AlertStates:
    def __init__(self, rules: Iterable[AlertRule], start_ms: int, max_sources: int,
                 known: Iterable[str] = ()) -> None:
        self.rules = tuple(rules)
        self._max_sources = max_sources
        # per rule: source -> PairState, least recently judged first
        self._pairs: list[OrderedDict[str, PairState]] = [OrderedDict() for _ in self.rules]
        self._forgotten: list[tuple[str, str]] = []
        self._threshold = [i for i, rule in enumerate(self.rules) if rule.silent_s is None]
        self._silence = [i for i, rule in enumerate(self.rules) if rule.silent_s is not None]
        for i in self._silence:  # watched from the start: a named source, or every source the spool knows
            for source in ([self.rules[i].source] if self.rules[i].source != "*" else known):
                self._pair(i, source, start_ms)

    @property
    def metrics(self) -> frozenset[str]:
        """The metrics the threshold rules compare: a frame without any of them needs no values unpacked."""
        return frozenset(self.rules[i].metric for i in self._threshold)

    def frame(self, source: str, ts_ms: int, received_ms: int, values: Mapping[str, float]) -> list[Transition]:
        """An accepted frame: its reading time, its receipt time and its values by metric."""
        out: list[Transition] = []
        for i, rule in enumerate(self.rules):
            if rule.source not in ("*", source):
                continue
            if rule.silent_s is not None:
                self._heard(i, rule, source, received_ms, out)
            elif rule.metric in values:
                self._judge(i, rule, source, ts_ms, values[rule.metric], out)
        return out

    def tick(self, now_ms: int) -> list[Transition]:
        """The gateway's clock: silence rules raise for sources silent longer than silent_s."""
        out: list[Transition] = []
        for i in self._silence:
            rule = self.rules[i]
            for source, pair in self._pairs[i].items():
                silent_ms = now_ms - pair.last
                if pair.state == OK and silent_ms > rule.silent_s * 1000:
                    pair.state, pair.since = FIRING, now_ms
                    out.append(Transition(rule.name, source, FIRING, "silence", None, silent_ms / 1000,
                                          rule.silent_s, now_ms))
        return out

    def take_forgotten(self) -> list[tuple[str, str]]:
        """(rule, source) pairs dropped past max_sources since the last call: their gauge series go."""
        forgotten, self._forgotten = self._forgotten, []
        return forgotten

    def states(self) -> dict[str, list[dict]]:
        """Per source, each rule's state with since (ms, None for ok never left): for /status.json."""
        by_source: dict[str, list[dict]] = {}
        for rule, pairs in zip(self.rules, self._pairs):
            for source, pair in pairs.items():
                by_source.setdefault(source, []).append({"rule": rule.name, "state": pair.state,
                                                         "since_ms": pair.since})
        return by_source

    def _pair(self, i: int, source: str, last: int) -> PairState:
        pairs = self._pairs[i]
        pair = pairs.get(source)
        if pair is not None:
            pairs.move_to_end(source)
            return pair
        pair = pairs[source] = PairState(last)
        if len(pairs) > self._max_sources:
            old, _ = pairs.popitem(last=False)
            self._forgotten.append((self.rules[i].name, old))
        return pair

    def _heard(self, i: int, rule: AlertRule, source: str, received_ms: int, out: list[Transition]) -> None:
        pair = self._pair(i, source, received_ms)
        if pair.state == FIRING:
            pair.state, pair.since = OK, received_ms
            out.append(Transition(rule.name, source, OK, "silence", None, (received_ms - pair.last) / 1000,
                                  rule.silent_s, received_ms))
        pair.last = max(pair.last, received_ms)

    def _judge(self, i: int, rule: AlertRule, source: str, ts_ms: int, value: float, out: list[Transition]) -> None:
        pair = self._pair(i, source, ts_ms)
        if ts_ms < pair.last:  # out of order
            return
        pair.last = ts_ms
        below = rule.below is not None
        holds = value < rule.below if below else value > rule.above
        if pair.state == FIRING:
            if value >= rule.clear_at if below else value <= rule.clear_at:
                pair.state, pair.since = OK, ts_ms
                out.append(Transition(rule.name, source, OK, rule.kind, rule.metric, value, rule.clear_at, ts_ms))
            return
        if not holds:
            if pair.state == PENDING:
                pair.state, pair.since = OK, None
            return
        if pair.state == OK:
            pair.state, pair.since = PENDING, ts_ms
        if ts_ms - pair.since >= rule.for_s * 1000:
            pair.state, pair.since = FIRING, ts_ms
            out.append(Transition(rule.name, source, FIRING, rule.kind, rule.metric, value, rule.threshold, ts_ms))
