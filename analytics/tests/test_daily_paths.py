"""The daily job's other read paths on the real node with real Spark, checked against reference.daily (plain
Python): `--all`, the only run that scans readings, aggregates every day present; the broadcast join with the
targets, used when a source lacks a day of the run, after late data of two sources (--since-last) and for explicit
days. One keyspace and one sequence of three runs, made once by a module fixture: gh-a has UTC days 03-26 .. 03-30,
gh-b only 03-27 and 03-28."""

from __future__ import annotations

import re
import subprocess
from datetime import date, timedelta
from typing import NamedTuple

import pytest

from telemetry_analytics_kit import reference
from telemetry_analytics_kit.checks import assert_matches, summary_rows
from telemetry_analytics_kit.loader import Reading, greenhouse_readings

from analytics_fixtures import keyspace, loader, ms, submit, thinned  # noqa: F401  (fixtures)

pytestmark = pytest.mark.cassandra
TZ = "Europe/Zagreb"  # UTC+1, UTC+2 from 03-29 (a 23-hour day): every local day spans two UTC partitions
A = thinned(greenhouse_readings("gh-a", ms(2026, 3, 26), ms(2026, 3, 31), 120_000, seed=21), 21)
B = thinned(greenhouse_readings("gh-b", ms(2026, 3, 27), ms(2026, 3, 29), 120_000, seed=22), 22)
# Late data: gh-a on UTC 03-28 (a new maximum of Zagreb 03-28), gh-b on UTC 03-27 (a new minimum of Zagreb 03-27).
LATE = [Reading("gh-a", "temp_in", ms(2026, 3, 28, 12, 0) + 30_000, 40.5),
        Reading("gh-b", "temp_out", ms(2026, 3, 27, 6, 0) + 30_000, -9.25)]


class Run(NamedTuple):
    done: subprocess.CompletedProcess  # the run's output
    rows: dict  # daily_summary (TZ) after it


@pytest.fixture(scope="module")
def runs(loader, submit, cql, keyspace) -> dict[str, Run]:
    """The module's one sequence of runs, in this order on one keyspace (each test asserts on its part): --all;
    late data of both sources, then --since-last; explicit days 03-29 .. 03-30."""
    loader.write(A + B)

    def run(*args: str) -> Run:
        done = submit("daily", "--tz", TZ, *args, "--explain")
        return Run(done, summary_rows(cql, keyspace, TZ))

    out = {"all": run("--all")}
    loader.write(LATE)
    out["late"] = run("--since-last", "--clock-skew", "0")
    out["explicit"] = run("--from", "2026-03-29", "--to", "2026-03-30")
    return out


def physical_plan(done) -> str:
    return done.stdout[done.stdout.index("== Physical Plan =="):]


def assert_reads_by_key_only(plan: str, keyspace: str) -> None:
    assert re.search(rf"Cassandra Direct Join \[source = source#\d+, day = day#\d+\] {keyspace}\.readings", plan)
    assert plan.count(f"{keyspace}.readings") == 1
    assert "BatchScan" not in plan and "CassandraScan" not in plan


def written_by(before: dict, after: dict) -> set:
    """(source, day) of the summary rows a run wrote (computed_at moved or the row is new)."""
    return {(s, d) for (s, d, m), row in after.items()
            if (s, d, m) not in before or row["computed_at"] != before[(s, d, m)]["computed_at"]}


def test_all_scans_readings_once_and_aggregates_every_day_present(runs, keyspace):
    done, actual = runs["all"]
    assert "all days (full scan of readings)" in done.stdout
    plan = physical_plan(done)
    # A full scan of the table (no partition-key filter pushed down), the only read of readings, no join with keys.
    assert re.search(rf"BatchScan readings\[.*\] Cassandra Scan: {keyspace}\.readings\n\s+- Cassandra Filters: \[\]\n",
                     plan), plan
    assert plan.count(f"{keyspace}.readings") == 1 and "Direct Join" not in plan and "Join" not in plan

    expected = reference.daily(A + B, TZ)
    # gh-a's readings run from Zagreb 03-26 01:00 to 03-31 02:00: six local days, gh-b's 03-27 01:00 .. 03-29 02:00.
    assert {(s, d) for s, d, _ in actual} == (
        {("gh-a", date(2026, 3, 26) + timedelta(days=i)) for i in range(6)}
        | {("gh-b", date(2026, 3, 27) + timedelta(days=i)) for i in range(3)})
    assert set(actual) == set(expected)
    assert_matches(actual, expected)
    # The edge days are partial (a first hour, a last two hours): aggregated from what exists, not dropped.
    assert actual[("gh-a", date(2026, 3, 31), "temp_in")]["count"] <= 60


def test_since_last_after_late_data_of_two_sources_joins_with_the_targets(runs, keyspace):
    before = runs["all"].rows
    done, after = runs["late"]
    # gh-a's UTC 03-28 changes Zagreb 03-28 and 03-29; gh-b's UTC 03-27 changes Zagreb 03-27 and 03-28. Not every
    # source has every day of the run, so readings are matched to the targets by a broadcast join: the partition
    # (gh-a, UTC 03-27) is read for gh-a's 03-28 and also holds gh-a's 03-27, a day of the run but no target of
    # gh-a; a day filter would rewrite gh-a's 03-27 from that one partition (missing its first hour, in UTC 03-26).
    assert "3 local day(s) 2026-03-27 … 2026-03-29, 2 source(s), 6 readings partition(s)" in done.stdout
    plan = physical_plan(done)
    assert_reads_by_key_only(plan, keyspace)
    assert re.search(r"BroadcastHashJoin \[source#\d+, day#\d+\], \[source#\d+, day#\d+\], Inner", plan), plan

    assert written_by(before, after) == {("gh-a", date(2026, 3, 28)), ("gh-a", date(2026, 3, 29)),
                                         ("gh-b", date(2026, 3, 27)), ("gh-b", date(2026, 3, 28))}
    assert_matches(after, reference.daily(A + B + LATE, TZ))  # every row, the ones not written included
    assert after[("gh-a", date(2026, 3, 28), "temp_in")]["max"] == 40.5
    assert after[("gh-b", date(2026, 3, 27), "temp_out")]["min"] == -9.25


def test_explicit_days_where_a_source_lacks_one_join_with_the_targets(runs, keyspace):
    before = runs["late"].rows
    done, after = runs["explicit"]
    # Zagreb 03-29 is UTC 03-28 23:00 .. 03-29 22:00: gh-b has its last hour (in UTC 03-28); 03-30 it has none.
    assert "2 local day(s) 2026-03-29 … 2026-03-30, 2 source(s)" in done.stdout
    plan = physical_plan(done)
    assert_reads_by_key_only(plan, keyspace)
    assert "BroadcastHashJoin" in plan

    assert written_by(before, after) == {("gh-a", date(2026, 3, 29)), ("gh-a", date(2026, 3, 30)),
                                         ("gh-b", date(2026, 3, 29))}
    expected = reference.daily(A + B + LATE, TZ)
    assert_matches(after, expected)
    assert 25 <= after[("gh-b", date(2026, 3, 29), "humidity")]["count"] <= 30  # one hour, a frame every 2 min
