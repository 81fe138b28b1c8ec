"""Day marks (gateway/contract/day-marks.md), without Cassandra: DayMarks' freshness and bounds, and the sender
sending a day's mark before its readings, stamping each attempt, and marking again before a retry once the mark
went stale. (The contract's cases: vectors/day_marks.jsonl, driven by test_contract_vectors.py.)"""

from __future__ import annotations

from datetime import date

import pytest
from cassandra.query import BatchStatement

from telemetry_gateway import sender as sender_module
from telemetry_gateway.day_marks import HOUR_MS, MARK_FRESH_S, DayMarks, mark_instant
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.reading_values import pack_values
from telemetry_gateway.sender import Sender
from telemetry_gateway.spool import SpooledFrame

D1, D2 = ("G", date(2026, 11, 23)), ("G", date(2026, 11, 22))
WALL_MS = 1_780_001_999_500  # half a second before a full UTC hour


def test_a_mark_is_fresh_for_mark_fresh_s_from_its_attempt_and_then_needed_again():
    marks = DayMarks()
    assert MARK_FRESH_S == 300.0  # half the analytics' default --clock-skew of 600 s
    assert marks.needs([D1, D2, D1], now=10.0) == ({D1, D2}, [D1, D2])
    mark = object()
    marks.begin([D1, D2], mark)
    assert marks.pending(D1) is mark
    assert marks.needs([D1], now=11.0) == ({D1}, [])  # in flight: waits for it, no second mark
    marks.acknowledged(mark, [D1, D2], sent_at=10.0, now=12.0)
    assert marks.pending(D1) is None and len(marks) == 2
    assert marks.needs([D1, D2], now=10.0 + MARK_FRESH_S) == (set(), [])
    assert marks.needs([D1], now=10.001 + MARK_FRESH_S) == ({D1}, [D1])


def test_an_older_attempt_acknowledged_late_does_not_make_a_mark_older():
    marks = DayMarks()
    newer, older = object(), object()
    marks.acknowledged(newer, [D1], sent_at=100.0, now=100.5)
    marks.acknowledged(older, [D1], sent_at=50.0, now=101.0)
    assert marks.is_fresh(D1, 100.0 + MARK_FRESH_S)


def test_stale_marks_are_dropped_and_the_count_is_bounded():
    marks = DayMarks(fresh_s=300.0, max_entries=3)
    for i in range(3):
        marks.acknowledged(object(), [(f"s{i}", D1[1])], sent_at=float(i), now=float(i))
    assert len(marks) == 3
    marks.acknowledged(object(), [("s3", D1[1])], sent_at=3.0, now=3.0)  # past the bound: the oldest goes
    assert len(marks) == 3 and not marks.is_fresh(("s0", D1[1]), 3.0) and marks.is_fresh(("s1", D1[1]), 3.0)
    marks.acknowledged(object(), [("s4", D1[1])], sent_at=302.5, now=302.5)  # s1 and s2 are stale by now
    assert len(marks) == 2 and marks.is_fresh(("s3", D1[1]), 302.5)


def test_a_mark_is_stamped_and_bucketed_at_the_instant_of_its_attempt():
    assert mark_instant(WALL_MS) == (WALL_MS - WALL_MS % HOUR_MS, WALL_MS)
    assert mark_instant(WALL_MS + 500) == (WALL_MS + 500, WALL_MS + 500)  # the next hour starts there


# --- the sender, with a fake session and clock -----------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.mono, self.wall_ms = 1000.0, WALL_MS

    def monotonic(self) -> float:
        return self.mono

    def time(self) -> float:
        return self.wall_ms / 1000

    def time_ns(self) -> int:
        return self.wall_ms * 1_000_000

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.wall_ms += round(seconds * 1000)


class Answer:
    def add_callbacks(self, callback, errback, callback_args=(), errback_args=()):
        self.ok = lambda: callback(None, *callback_args)
        self.fail = lambda: errback(RuntimeError("unreachable"), *errback_args)


class Session:
    """Records what is executed; the test answers each request."""

    def __init__(self) -> None:
        self.sent: list[tuple[object, Answer]] = []

    def execute_async(self, statement):
        answer = Answer()
        self.sent.append((statement, answer))
        return answer

    def take(self) -> list[tuple[object, Answer]]:
        sent, self.sent = self.sent, []
        return sent


class Spool:
    def __init__(self) -> None:
        self.frames: list[SpooledFrame] = []

    def add(self, id_: int, day: tuple[str, date]) -> None:
        ts_ms = int((day[1] - date(1970, 1, 1)).total_seconds() * 1000) + 3_600_000
        self.frames.append(SpooledFrame(id_, day[0], ts_ms, ts_ms, *pack_values((("n", float(id_)),))))

    def take(self, after: int, limit: int) -> list[SpooledFrame]:
        return [f for f in self.frames if f.id > after][:limit]

    def damaged_rows(self) -> list[tuple]:
        return []


class Readings:
    def batch(self, source, day, frames):
        return f"readings {source} {day} {[f.id for f in frames]}"


class Statements:
    source_day = type("SourceDay", (), {"bind": staticmethod(lambda values: f"source_days {values}")})
    day_change = "mark %s|%s|%s|%s"  # query texts: the driver formats the parameters in
    latest = "latest %s|%s|%s|%s|%s"


def mark_rows(statement) -> list[tuple[int, str, str, int]]:
    """(bucket, day, source, written_at) of a day_changes batch."""
    assert isinstance(statement, BatchStatement)
    rows = []
    for _, query, _ in statement._statements_and_parameters:
        bucket, day, source, written_at = query.removeprefix("mark ").split("|")
        rows.append((int(bucket), day.strip("'"), source.strip("'"), int(written_at)))
    return rows


@pytest.fixture
def rig(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(sender_module, "time", clock)
    spool, session, acked = Spool(), Session(), []
    sender = Sender(spool, None, "k", batch_rows=100, max_in_flight=8, retry_max_s=1.0, metrics=Metrics(),
                    on_acked=acked.append)
    sender._session, sender._statements, sender._reading_batches = session, Statements(), Readings()

    def step():
        """One round of the sender's loop: what it sent, `latest` writes left out (answered at once)."""
        sender.nudge()
        sender._step()
        sent = []
        for statement, answer in session.take():
            if kind(statement) == "latest":
                answer.ok()
            else:
                sent.append((statement, answer))
        return sent
    return clock, spool, sender, step, acked


def kind(statement) -> str:
    if isinstance(statement, BatchStatement):
        return statement._statements_and_parameters[0][1].split()[0]
    return statement.split()[0]


def kinds(sent) -> list[str]:
    return [kind(statement) for statement, _ in sent]


def test_the_marks_go_first_and_the_readings_once_they_are_acknowledged(rig):
    clock, spool, sender, step, acked = rig
    spool.add(1, D1)
    spool.add(2, D2)
    sent = step()
    assert kinds(sent) == ["mark", "source_days", "source_days"]  # source_days as before; readings wait
    assert mark_rows(sent[0][0]) == [(WALL_MS - WALL_MS % HOUR_MS, "2026-11-23", "G", WALL_MS),
                                     (WALL_MS - WALL_MS % HOUR_MS, "2026-11-22", "G", WALL_MS)]
    for _, answer in sent[1:]:
        answer.ok()
    assert kinds(step()) == [] and acked == []
    clock.advance(0.004)
    sent[0][1].ok()
    sent = step()
    assert kinds(sent) == ["readings", "readings"] and acked == []
    for _, answer in sent:
        answer.ok()
    step()
    assert acked == [(1, 2)]  # at once: no flush period to wait for
    assert sender.idle

    spool.add(3, D1)  # within MARK_FRESH_S of the mark: no new one
    clock.advance(MARK_FRESH_S - 0.004)
    sent = step()
    assert kinds(sent) == ["readings"]
    sent[0][1].ok()
    step()
    assert acked[-1] == (3, 3)

    spool.add(4, D1)
    clock.advance(0.001)  # the mark's attempt was sent MARK_FRESH_S + 1 ms ago
    assert kinds(step()) == ["mark"]


def test_a_retried_mark_is_stamped_again_and_a_stale_readings_retry_is_marked_again(rig):
    clock, spool, sender, step, acked = rig
    spool.add(1, D1)
    sent = step()
    assert kinds(sent) == ["mark", "source_days"]
    sent[1][1].ok()
    sent[0][1].fail()
    step()
    clock.advance(0.6)  # the retry's wait, past the hour
    sent = step()
    assert kinds(sent) == ["mark"]
    hour = WALL_MS + 600 - (WALL_MS + 600) % HOUR_MS
    assert mark_rows(sent[0][0]) == [(hour, "2026-11-23", "G", WALL_MS + 600)]  # this attempt's instant
    sent[0][1].ok()
    sent = step()
    assert kinds(sent) == ["readings"]
    sent[0][1].fail()  # a long outage begins
    step()
    clock.advance(MARK_FRESH_S + 0.001)  # the retry is due, and the mark is stale by then
    sent = step()
    assert kinds(sent) == ["mark"]
    assert mark_rows(sent[0][0])[0][3] == WALL_MS + 600 + round(MARK_FRESH_S * 1000) + 1
    sent[0][1].ok()
    sent = step()
    assert kinds(sent) == ["readings"] and acked == []
    sent[0][1].ok()
    step()
    assert acked == [(1, 1)] and sender.idle
