"""Day marks (gateway/contract/day-marks.md) end to end: the real gateways, the real Cassandra and the daily Spark
job's `--since-last`. A crash cannot leave a day unmarked, and a mark retried through an outage longer than the
job's clock-skew margin is still picked up.

Each test runs every gateway under test at once (each with sources of its own) so that they share the Spark runs
(~20 s each). Both need a busy source beside the sparse one: with the old order (readings, then the mark in a
flush every 0.5 s) a sparse source's frame on an idle gateway was marked within a millisecond of its readings, too
soon to kill the gateway or cut its link in between; a busy source keeps that flush on its 0.5 s beat, as on a
real gateway."""

from __future__ import annotations

import shlex
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from telemetry_analytics_kit import reference
from telemetry_analytics_kit.checks import assert_matches, submit_job, summary_rows
from telemetry_analytics_kit.loader import Reading
from telemetry_conformance import Board, GatewayUnderTest, PacedWriter, Stream, gateways_under_test, wait_for
from telemetry_conformance.cassandra_proxy import CutProxy
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # each test runs the gateways under test side by side, sharing the Spark runs
UTC = timezone.utc
HOUR_MS = 3_600_000
SKEW_S = 5  # the small --clock-skew of the outage test


class SparseBoard:
    """A board whose source sends a frame now and then, each with an explicit t (backfill), on a pty of its own."""

    def __init__(self, link: Path, source: str) -> None:
        self.board, self.stream = Board(link), Stream(source)
        self.readings: list[Reading] = []

    def send(self, t_ms: int, n: int) -> date:
        values = {"temp_in": 17.25 + n, "rh": 40.5 - n}
        self.board.write(self.stream.frame(n, t=t_ms, **values))
        self.readings += [Reading(self.stream.source, metric, t_ms, float(value))
                          for metric, value in {"n": n, **values}.items()]
        return datetime.fromtimestamp(t_ms / 1000, UTC).date()


class Rig:
    """One gateway under test: a busy board (a paced stream of today's frames) and a sparse one, on two ports."""

    def __init__(self, name: str, command: list[str], tmp: Path, keyspace: str, host: str, gateways: list) -> None:
        folder = tmp / name
        folder.mkdir()
        self.name, self.command = name, command
        self.busy_board = Board(folder / "ttyUSB0")
        self.sparse = SparseBoard(folder / "ttyUSB1", f"sparse-{name}")
        # The default write-behind policy: a frame is held in memory only, so one lost by a crash is not re-sent.
        self.gateway = GatewayUnderTest.configure(folder, [self.busy_board.link, self.sparse.board.link], keyspace,
                                                  host, fsync="deferred")
        gateways.append(self.gateway)
        self.busy: PacedWriter | None = None
        self.proxy: CutProxy | None = None  # the outage test's link to Cassandra

    def start(self, monkeypatch, **env: str) -> None:
        monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(self.command))
        self.gateway.start(**env)
        wait_for(lambda: self.gateway.metric("telemetry_gateway_cassandra_up") == 1, 30, f"{self.name} connected")

    def start_busy(self) -> None:
        self.busy = PacedWriter(self.busy_board, Stream(f"busy-{self.name}"), rate=20,
                                t_base_ms=int(time.time() * 1000) - HOUR_MS)
        self.busy.start()
        wait_for(lambda: self.gateway.metric("telemetry_gateway_frames_written_total") >= 10, 30,
                 f"{self.name}: the busy source's first frames written")

    def stop_busy(self) -> None:
        self.busy.finish()


def reading_landed(db, source: str, day: date) -> bool:
    return db.execute("SELECT ts FROM readings WHERE source = %s AND day = %s LIMIT 1", [source, day]).one() is not None


def send_and_act_once_landed(db, rig: Rig, t_ms: int, n: int, act) -> date:
    """The sparse source's frame; act() as soon as its first row is readable (polled every few ms)."""
    day = rig.sparse.send(t_ms, n)
    wait_for(lambda: reading_landed(db, rig.sparse.stream.source, day), 30,
             f"{rig.name}: the sparse frame's readings", interval=0.003)
    act()
    return day


def marks(db, source: str, since: datetime) -> dict[date, datetime]:
    """day → written_at of source's day_changes rows in the hour buckets from since to now."""
    found = {}
    bucket = since.replace(minute=0, second=0, microsecond=0)
    while bucket <= datetime.now(UTC):
        for row in db.execute("SELECT day, source, written_at FROM day_changes WHERE bucket = %s", [bucket]):
            if row.source == source:
                day = row.day.date() if hasattr(row.day, "date") else row.day
                found[day] = row.written_at.replace(tzinfo=UTC)
        bucket += timedelta(hours=1)
    return found


def past_t_ms(days_back: int, minute: int) -> int:
    """A frame time days_back UTC days ago, at 10:minute:07.250 (a backfilled frame)."""
    day = datetime.now(UTC).date() - timedelta(days=days_back)
    return int(datetime(day.year, day.month, day.day, 10, minute, 7, 250_000, tzinfo=UTC).timestamp() * 1000)


def daily(host: str, keyspace: str, *args: str) -> str:
    return submit_job(host, keyspace, "daily", "--tz", "UTC", "--since-last", *args).stdout


def assert_summarised(db, keyspace: str, readings: list[Reading], who: str) -> None:
    """daily_summary holds exactly the reference figures of these readings' days (count, min, max, mean, ...)."""
    expected = reference.daily(readings, "UTC")
    actual = summary_rows(db, keyspace, "UTC")
    missing = sorted(set(expected) - set(actual))
    assert not missing, f"{who}: no daily_summary for {missing}"
    assert_matches(actual, expected)


def test_a_sigkill_right_after_the_readings_landed_leaves_the_day_marked(tmp_path, keyspace, cassandra_node, db,
                                                                          gateways, monkeypatch):
    """A sparse source's one backfilled frame (a day 3 days ago), the gateway SIGKILLed the moment its readings are
    readable: the day's mark is in day_changes, and `daily --since-last` (watermark from a run before the frame)
    recomputes the day with exactly the frame's figures."""
    before = datetime.now(UTC)
    daily(cassandra_node, keyspace)  # the watermark: a run before any frame
    rigs = [Rig(name, command, tmp_path, keyspace, cassandra_node, gateways)
            for name, command in gateways_under_test().items()]
    for rig in rigs:
        rig.start(monkeypatch)
        rig.start_busy()
    days = {}
    for index, rig in enumerate(rigs):
        days[rig.name] = send_and_act_once_landed(db, rig, past_t_ms(3, index), 1, rig.gateway.kill)
        rig.stop_busy()
    for rig in rigs:
        marked = marks(db, rig.sparse.stream.source, before)
        assert days[rig.name] in marked, (f"{rig.name}: SIGKILLed once the readings of {days[rig.name]} landed, the "
                                          f"day has no day_changes row (marks: {marked})")
    daily(cassandra_node, keyspace)  # default --clock-skew
    for rig in rigs:
        assert_summarised(db, keyspace, rig.sparse.readings, rig.name)


@pytest.fixture
def proxies():
    made: list[CutProxy] = []
    yield made
    for proxy in made:
        proxy.close()


def test_b_a_mark_retried_through_an_outage_longer_than_the_skew_is_picked_up(tmp_path, keyspace, cassandra_node,
                                                                               db, gateways, monkeypatch, proxies):
    """Each gateway talks to Cassandra through a proxy that can cut it off; the Spark job is not cut off. A sparse
    frame (4 days ago) lands, and the link is cut the moment its readings are readable; another (5 days ago) is
    sent while the link is down. After more than SKEW_S seconds, `daily --since-last --clock-skew SKEW_S` runs; then
    the link is back, the rows and marks land, and the same run again: both days are summarised. Under the old
    order the first day's mark, built before the cut and retried with that written_at, came too old for the
    second run; a mark stamped once at its first attempt would do the same to the second day."""
    daily(cassandra_node, keyspace)  # the watermark: a run before any frame
    rigs = []
    for name, command in gateways_under_test().items():
        rig = Rig(name, command, tmp_path, keyspace, cassandra_node, gateways)
        rig.proxy = CutProxy(cassandra_node)
        proxies.append(rig.proxy)
        rig.start(monkeypatch, TELEMETRY_CASSANDRA_PORT=str(rig.proxy.port))
        rig.start_busy()
        rigs.append(rig)
    before = datetime.now(UTC)
    days = {}
    for index, rig in enumerate(rigs):
        landed = send_and_act_once_landed(db, rig, past_t_ms(4, index), 1, rig.proxy.cut)
        rig.stop_busy()
        down = rig.sparse.send(past_t_ms(5, index), 2)  # while the link is down
        days[rig.name] = (landed, down)
    time.sleep(SKEW_S + 1)  # the unreachable frame's first mark attempt is older than the skew
    daily(cassandra_node, keyspace, "--clock-skew", str(SKEW_S))
    for rig in rigs:
        rig.proxy.restore()
    for rig in rigs:
        source, (landed, down) = rig.sparse.stream.source, days[rig.name]
        wait_for(lambda: reading_landed(db, source, down), 60, f"{rig.name}: the readings sent while cut off")
        wait_for(lambda: {landed, down} <= marks(db, source, before).keys(), 60, f"{rig.name}: both days' marks")
    daily(cassandra_node, keyspace, "--clock-skew", str(SKEW_S))
    for rig in rigs:
        assert_summarised(db, keyspace, rig.sparse.readings, rig.name)
        assert rig.gateway.stop() == 0
