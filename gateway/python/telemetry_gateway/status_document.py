"""The /status.json document (gateway/contract/status.md, status.schema.json) from what the gateway knows at one
moment: a pure function, so both its shape and its rules are unit-tested without a running gateway."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .status_tally import SourceView, is_stale
from .timestamps import iso_ms


@dataclass(frozen=True)
class GatewayFacts:
    version: str
    implementation: str
    policy: str
    started_ms: int
    stale_after_s: float


@dataclass(frozen=True)
class Moment:
    """What the status page shows besides the sources, read at now_ms."""
    now_ms: int
    rejects: Mapping[str, int]
    spool_frames: int
    held_frames: int
    oldest_unsent_ms: int | None  # received_ms of the oldest frame in the spool file
    cassandra_up: bool
    last_error: tuple[str, int] | None  # (error kind, wall ms)


def status_document(facts: GatewayFacts, moment: Moment, sources: Sequence[SourceView],
                    alerts: Mapping[str, Sequence[Mapping]], units: Mapping[str, str],
                    series: Mapping[str, Sequence] = {}) -> dict:
    """series: SeriesTally.view()'s, source -> (metric, points) in order."""
    now = moment.now_ms
    stale_after_ms = facts.stale_after_s * 1000
    views = {view.source: view for view in sources}
    for source in alerts:  # a source only a rule knows (silent since start): shown, with nothing read
        views.setdefault(source, SourceView(source, None, None, (), 0.0, 0, 0, {}))
    return {
        "gateway": {"version": facts.version, "implementation": facts.implementation, "policy": facts.policy,
                    "started": iso_ms(facts.started_ms), "uptime_s": max(0, now - facts.started_ms) / 1000},
        "now": iso_ms(now),
        "stale_after_s": facts.stale_after_s,
        "sources": [source_entry(views[name], now, stale_after_ms, alerts.get(name, ()), units, series.get(name, ()))
                    for name in sorted(views)],
        "rejects": {reason: count for reason, count in sorted(moment.rejects.items()) if count > 0},
        "spool": {"frames": moment.spool_frames, "held_frames": moment.held_frames,
                  "oldest_unsent_age_s": (None if moment.oldest_unsent_ms is None
                                          else max(0, now - moment.oldest_unsent_ms) / 1000)},
        "cassandra": {"state": "up" if moment.cassandra_up else "down",
                      "last_error": (None if moment.last_error is None
                                     else {"kind": moment.last_error[0], "at": iso_ms(moment.last_error[1])})},
    }


def source_entry(view: SourceView, now_ms: int, stale_after_ms: float, alerts: Sequence[Mapping],
                 units: Mapping[str, str], series: Sequence = ()) -> dict:
    last = view.last_received_ms
    return {
        "source": view.source,
        "last_frame": None if last is None else iso_ms(last),
        "age_s": None if last is None else max(0, now_ms - last) / 1000,
        "stale": is_stale(last, now_ms, stale_after_ms),
        "values_at": None if view.values_ts_ms is None else iso_ms(view.values_ts_ms),
        "values": [{"metric": metric, "value": value, "unit": units.get(metric)} for metric, value in view.values],
        "frames_per_minute": view.frames_per_minute,
        "seq_gaps": view.seq_gaps,
        "duplicates": view.duplicates,
        "rejects": dict(view.rejects),
        "refused_burst": view.refused_burst,
        "alerts": sorted((dict(item) for item in alerts), key=lambda item: item["rule"]),
        "series": [{"metric": metric, "points": [[iso_ms(at), low, high, last] for at, low, high, last in points]}
                   for metric, points in series],
    }
