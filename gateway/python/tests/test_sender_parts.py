"""The sender's bookkeeping, without Cassandra: what may leave the spool, when a failed request is retried, and
which `latest` row wins. (Day marks: test_day_marks.py.)"""

from datetime import date

from telemetry_gateway.backoff import backoff_s
from telemetry_gateway.latest_rows import LatestRows
from telemetry_gateway.request_pump import Request
from telemetry_gateway.retry_schedule import RetrySchedule
from telemetry_gateway.write_ledger import KNOWN_DAYS_MAX, Chunk, MarkWrite, WriteLedger
from telemetry_gateway.write_plan import LatestRow

DAY = date(2026, 11, 23)


def chunk(first: int, last: int, days=(("G", DAY),)) -> Chunk:
    return Chunk(first, last, frames=[], rows=4 * (last - first + 1), days=list(days))


def test_a_chunk_is_acknowledged_once_its_readings_and_source_days_succeeded():
    ledger = WriteLedger()
    first, second = chunk(1, 10), chunk(11, 20, days=(("G", DAY), ("H", DAY)))
    ledger.expect(2, first)
    ledger.expect(1, second)
    ledger.expect(1)  # a mark write: owned by nobody's chunk
    assert ledger.outstanding == 4 and not ledger.idle
    assert ledger.succeeded(first) is None  # one of its two requests
    assert ledger.succeeded(MarkWrite([("G", DAY)])) is None
    assert ledger.succeeded(second) is second and ledger.known_days == {("G", DAY), ("H", DAY)}
    assert ledger.succeeded(first) is first
    assert ledger.idle


def test_the_known_days_are_forgotten_past_their_bound():
    ledger = WriteLedger()
    ledger.expect(1, junk := chunk(1, 1, days=[(f"j{i}", DAY) for i in range(KNOWN_DAYS_MAX + 1)]))
    assert ledger.succeeded(junk) is junk and len(ledger.known_days) == KNOWN_DAYS_MAX + 1
    ledger.expect(1, one := chunk(2, 2))
    ledger.succeeded(one)
    assert ledger.known_days == {("G", DAY)}


def test_a_request_owned_by_nobody_only_counts_down():
    ledger = WriteLedger()
    ledger.expect(2)
    assert ledger.succeeded(None) is None
    assert ledger.succeeded(None) is None and ledger.idle


def test_failed_requests_come_back_on_the_shared_backoff_schedule_earliest_first():
    retries = RetrySchedule(max_s=5.0)
    late, early = Request(0.0, "late", None), Request(0.0, "early", None)
    retries.retry_later(late, now=99.0)
    assert retries.due(99.0 + backoff_s(1, 5.0)) == [late]  # sent again, and failed again: waits longer
    retries.retry_later(late, now=100.0)
    retries.retry_later(early, now=100.0)
    assert late.attempts == 2 and late.due == 100.0 + backoff_s(2, 5.0)
    assert early.due == 100.0 + backoff_s(1, 5.0) < late.due
    assert retries.due(100.0) == [] and len(retries) == 2
    assert retries.due(late.due) == [early, late] and len(retries) == 0


def test_retries_wait_at_most_the_configured_maximum():
    retries = RetrySchedule(max_s=2.0)
    request = Request(0.0, "x", None)
    for _ in range(30):
        retries.retry_later(request, now=0.0)
        retries.due(1e9)
    assert request.due == 2.0


def test_latest_keeps_the_newest_reading_per_source_and_metric_and_an_equal_time_replaces():
    latest = LatestRows()
    latest.merge([LatestRow("G", "temp_in", 2000, 20.0), LatestRow("G", "light", 1000, 5.0)])
    latest.merge([LatestRow("G", "temp_in", 1000, 19.0),  # older, replayed: ignored
                  LatestRow("G", "light", 1000, 6.0),  # same time: the later one wins
                  LatestRow("H", "temp_in", 500, 1.0)])
    assert latest
    rows = sorted(latest.take(), key=lambda row: (row.source, row.metric))
    assert not latest
    assert rows == [LatestRow("G", "light", 1000, 6.0), LatestRow("G", "temp_in", 2000, 20.0),
                    LatestRow("H", "temp_in", 500, 1.0)]
