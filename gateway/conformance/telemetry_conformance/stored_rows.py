"""What landed in Cassandra: the frames and frame numbers stored for a source, the check that each frame sent is
stored exactly once, and the wait for every frame of a stream."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from .boards import TimedWriter
from .waits import wait_for


def assert_each_frame_once(stored: dict[int, list[tuple[int, dict[str, float]]]], sent: set[int],
                           writer: TimedWriter, who: str = "") -> None:
    """Every frame sent is stored (stored_frames) exactly once, under ts = its explicit t, with its values; and
    nothing else is."""
    who = f"{who}: " if who else ""
    missing = sorted(sent - stored.keys())
    assert not missing, f"{who}sent {len(sent)}, stored {len(stored)}, lost {len(missing)}: {missing[:50]}"
    assert stored.keys() == sent, f"{who}frames that were never sent: {sorted(stored.keys() - sent)[:20]}"
    for n in sorted(stored):
        assert len(stored[n]) == 1, f"{who}frame {n} stored {len(stored[n])} times: {stored[n]}"
        ts, values = stored[n][0]
        assert ts == writer.t_base_ms + n, f"{who}frame {n}: ts {ts}, sent with t={writer.t_base_ms + n}"
        assert values == writer.expected_values(n), f"{who}frame {n}: {values}"


def stored_frames(session, source: str, days) -> dict[int, list[tuple[int, dict[str, float]]]]:
    """{frame number: [(ts ms, {metric: value}), ...]} for every frame stored for source on those UTC days: a frame
    stored twice (under two timestamps) has two entries."""
    by_ts: dict[int, dict[str, float]] = {}
    for day in days:
        for row in session.execute("SELECT metric, ts, value FROM readings WHERE source = %s AND day = %s",
                                   [source, day]):
            ts = int(row.ts.replace(tzinfo=timezone.utc).timestamp() * 1000)
            by_ts.setdefault(ts, {})[row.metric] = row.value
    frames: dict[int, list[tuple[int, dict[str, float]]]] = {}
    for ts, values in by_ts.items():
        frames.setdefault(int(values.get("n", -1)), []).append((ts, values))
    return frames


def utc_days_around_now() -> list[date]:
    today = datetime.now(timezone.utc).date()
    return [today - timedelta(days=1), today, today + timedelta(days=1)]


def stored_numbers(session, source: str, days=None) -> list[int]:
    """Every value of metric n stored for source: a frame stored twice (e.g. under two timestamps) shows twice."""
    numbers = []
    for day in days or utc_days_around_now():
        rows = session.execute("SELECT value FROM readings WHERE source = %s AND day = %s AND metric = 'n'",
                               [source, day])
        numbers += [int(r.value) for r in rows]
    return numbers


def all_stored(session, stream, timeout: float = 60) -> list[int]:
    """Waits until the stored frame numbers of stream's source are exactly those it sent; returns them."""
    def stored():
        numbers = stored_numbers(session, stream.source)
        return numbers if sorted(numbers) == sorted(stream.sent) else None
    return wait_for(stored, timeout, f"all {len(stream.sent)} frames of {stream.source} in Cassandra")
