"""The daily job on the real node with real Spark, checked against reference.daily (plain Python).

One keyspace and one sequence of five runs (spark-submit start-up is ~20 s each), made once by a module fixture:
explicit days around the spring DST change in Europe/Zagreb (a 23-hour day; every Zagreb day spans UTC midnight),
the first --since-last run, late data for an older day, a precise --since-last afterwards, an idle one, and a rerun
of the autumn 25-hour day that gives the same rows."""

from __future__ import annotations

import re
import subprocess
from datetime import date
from typing import NamedTuple

import pytest

from telemetry_analytics_kit import reference
from telemetry_analytics_kit.checks import assert_matches, summary_rows
from telemetry_analytics_kit.loader import Reading, greenhouse_readings

from analytics_fixtures import keyspace, loader, ms, submit, thinned  # noqa: F401  (fixtures)

pytestmark = pytest.mark.cassandra
TZ = "Europe/Zagreb"
SOURCES = ("gh-a", "gh-b")


# UTC 2026-03-27 .. 03-31 (spring change on 03-29) and 10-24 .. 10-26 (autumn change on 10-25), one frame a minute.
SPRING = [r for i, s in enumerate(SOURCES)
          for r in thinned(greenhouse_readings(s, ms(2026, 3, 27), ms(2026, 3, 31), 60_000, seed=i), i)]
AUTUMN = [r for i, s in enumerate(SOURCES)
          for r in thinned(greenhouse_readings(s, ms(2026, 10, 24), ms(2026, 10, 27), 60_000, seed=10 + i), i)]
# Late data for local 03-28 of gh-a: frames in between the minutes, one of them a new minimum of temp_in.
LATE = [Reading("gh-a", "temp_in", ms(2026, 3, 28, 10, 0) + 30_000, -7.5),
        Reading("gh-a", "temp_in", ms(2026, 3, 28, 10, 1) + 30_000, 12.25),
        Reading("gh-a", "humidity", ms(2026, 3, 28, 22, 59) + 59_000, 99.0)]  # 23:59:59 Zagreb time
SPRING_DAYS = {date(2026, 3, 28), date(2026, 3, 29), date(2026, 3, 30)}


class Run(NamedTuple):
    done: subprocess.CompletedProcess  # the run's output
    rows: dict  # daily_summary (TZ) after it


@pytest.fixture(scope="module")
def runs(loader, submit, cql, keyspace) -> dict[str, Run]:
    """The module's one sequence of runs, in this order on one keyspace (each test asserts on its part): explicit
    spring days; the first --since-last (no watermark yet: every stored day); late data, then a precise --since-last;
    an idle --since-last; a rerun of the autumn day, already computed by the first --since-last."""
    loader.write(SPRING)
    loader.write(AUTUMN)

    def run(*args: str) -> Run:
        done = submit("daily", "--tz", TZ, *args)
        return Run(done, summary_rows(cql, keyspace, TZ))

    out = {"explicit": run("--from", "2026-03-28", "--to", "2026-03-30", "--explain"),
           "first": run()}  # --since-last is the default
    loader.write(LATE)  # as the gateway would: readings, source_days, then day_changes
    out["late"] = run("--since-last", "--clock-skew", "0")
    out["idle"] = run("--clock-skew", "0")
    out["autumn"] = run("--day", "2026-10-25")
    return out


def partitions_logged(stderr: str) -> int:
    return int(re.search(r"(\d+) readings partition\(s\)", stderr).group(1))


def test_explicit_days_dst_and_utc_midnight_and_partition_pruning(runs, keyspace):
    done, actual = runs["explicit"]
    # Pruning, from the physical plan: readings come from a direct join on the full partition key, and no other
    # read of readings (a scan) is in the plan.
    plan = done.stdout[done.stdout.index("== Physical Plan =="):]
    assert re.search(rf"Cassandra Direct Join \[source = source#\d+, day = day#\d+\] {keyspace}\.readings", plan)
    assert plan.count(f"{keyspace}.readings") == 1
    assert "BatchScan" not in plan and "CassandraScan" not in plan
    # 3 local days in Zagreb cover UTC days 03-27 .. 03-30: 4 partitions per source, not the 5 stored.
    assert partitions_logged(done.stdout) == 8

    expected = reference.daily(SPRING, TZ, SPRING_DAYS)
    assert_matches(actual, expected)
    assert set(actual) == set(expected)  # only the requested days were written
    # The spring-forward day has 23 hours of readings: 23 * 60 minutes less the thinned frames.
    dst = actual[("gh-a", date(2026, 3, 29), "temp_in")]
    assert dst["last_ts"] - dst["first_ts"] < 23 * 3_600_000
    assert 23 * 60 * 0.9 < dst["count"] <= 23 * 60


def test_first_since_last_takes_every_day_then_late_data_only_its_days(runs):
    first, before = runs["first"]
    assert "no watermark yet" in first.stdout
    everything = SPRING + AUTUMN
    assert_matches(before, reference.daily(everything, TZ))

    late, after = runs["late"]
    # UTC day 03-28 of gh-a overlaps Zagreb days 03-28 and 03-29: those two, for that source only.
    assert "2 local day(s) 2026-03-28 … 2026-03-29, 1 source(s)" in late.stdout, late.stdout
    assert_matches(after, reference.daily(everything + LATE, TZ))
    assert after[("gh-a", date(2026, 3, 28), "temp_in")]["min"] == -7.5
    recomputed = {k for k in after if after[k]["computed_at"] != before[k]["computed_at"]}
    assert recomputed and {(s, d) for s, d, _ in recomputed} == {("gh-a", date(2026, 3, 28)),
                                                                 ("gh-a", date(2026, 3, 29))}

    idle = runs["idle"].done
    assert "0 local day(s)" in idle.stdout and "done: 0 summary rows" in idle.stdout


def test_autumn_day_has_25_hours_and_a_rerun_gives_the_same_rows(runs):
    once = runs["idle"].rows  # the autumn day as the first --since-last wrote it
    autumn, twice = runs["autumn"]
    assert "1 local day(s) 2026-10-25 … 2026-10-25, 2 source(s)" in autumn.stdout, autumn.stdout
    # the rerun rewrote that day's rows of both sources, and only those
    rewritten = {(s, d) for (s, d, m), row in twice.items() if row["computed_at"] != once[(s, d, m)]["computed_at"]}
    assert set(twice) == set(once) and rewritten == {(s, date(2026, 10, 25)) for s in SOURCES}
    long_day = twice[("gh-b", date(2026, 10, 25), "light")]
    assert long_day["last_ts"] - long_day["first_ts"] > 24 * 3_600_000
    strip = lambda rows: {k: {f: v for f, v in r.items() if f != "computed_at"} for k, r in rows.items()}  # noqa
    assert strip(twice) == strip(once)
    assert_matches(twice, reference.daily(SPRING + AUTUMN + LATE, TZ))


def test_bad_input_is_one_line_and_exit_2(submit):
    done = submit("daily", "--tz", "Mars/Olympus", "--day", "2026-03-29", check=False)
    # Refused by the job's own options check before spark-submit starts: one line on stderr, no JVM, no traceback.
    assert done.returncode == 2
    assert "daily: error: unknown time zone 'Mars/Olympus'" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == "" and "spark" not in done.stderr.lower()
