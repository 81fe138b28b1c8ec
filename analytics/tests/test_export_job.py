"""The export job on the real node with real Spark: the raw readings of local days around the autumn DST change in
Europe/Berlin (10-25 has 25 hours), row for row against what was loaded, as CSV and as Parquet (read back with
pyarrow, types checked), with the local_time column that --tz asks for (exact texts on both sides of the change);
an empty range (no zone given: no local_time); an unknown source. Four spark-submit runs, one per outcome."""

from __future__ import annotations

import csv
import re
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from telemetry_analytics.export_job import unknown_sources
from telemetry_analytics.job_options import parse_export
from telemetry_analytics_kit.loader import Reading, greenhouse_readings

from analytics_fixtures import keyspace, loader, ms, submit  # noqa: F401  (fixtures)

pytestmark = pytest.mark.cassandra
TZ = ZoneInfo("Europe/Berlin")
UTC = timezone.utc
DAYS = (date(2026, 10, 25), date(2026, 10, 26))
# Stored: UTC 10-24 .. 10-27 noon, more than the two local days, so the export has readings to leave out.
READINGS = [r for i, s in enumerate(("gh-a", "gh-b"))
            for r in greenhouse_readings(s, ms(2026, 10, 24) + i * 7_000, ms(2026, 10, 27, 12), 60_000, seed=30 + i)]
# Doubles whose shortest text is long or in exponent form: the CSV must give back the very same double.
ODD = [Reading("gh-a", "probe", ms(2026, 10, 25, 1, 30) + i, v)
       for i, v in enumerate([0.1 + 0.2, 1e-7, 2e-3, 1e23, 123456789.123, -0.0, 5e-324, 1.7976931348623157e308, 1 / 3])]


def local_day(ts_ms: int) -> date:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).astimezone(TZ).date()


def expected(sources=None, metrics=None) -> list[tuple[str, str, int, float]]:
    rows = [(r.source, r.metric, r.ts_ms, r.value) for r in READINGS + ODD
            if local_day(r.ts_ms) in DAYS and (sources is None or r.source in sources)
            and (metrics is None or r.metric in metrics)]
    return sorted(rows, key=lambda r: (r[0], r[2], r[1]))


def iso_ms(text: str) -> int:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text), text
    return round(datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000)


@pytest.fixture(scope="module")
def loaded(loader):
    loader.write(READINGS + ODD)
    return loader


def one_error_line(done, text: str) -> None:
    output = done.stdout + done.stderr
    assert [line for line in output.splitlines() if line.startswith("export: error")] == [text], output[-3000:]
    assert "Traceback" not in output


def test_unknown_sources_are_those_never_seen():
    assert unknown_sources(["gh-a", "gh-x", "gh-old"], ["gh-a"], ["gh-a", "gh-old"]) == ["gh-x"]
    assert unknown_sources([], [], []) == []


def local_iso(ts_ms: int) -> str:
    """The reference for local_time: Python's own rendering of the instant in Berlin, with its offset."""
    return datetime.fromtimestamp(ts_ms / 1000, tz=TZ).isoformat(timespec="milliseconds")


def test_local_time_is_asked_for_by_a_zone_given(monkeypatch, tmp_path):
    monkeypatch.delenv("TELEMETRY_TZ", raising=False)
    base = ["--day", "2026-10-25", "--format", "csv", "--out", str(tmp_path / "x.csv")]
    assert not parse_export(base).local_time
    assert parse_export(base + ["--tz", "UTC"]).local_time and parse_export(base + ["--tz=Europe/Berlin"]).local_time
    monkeypatch.setenv("TELEMETRY_TZ", "Europe/Berlin")
    assert parse_export(base).local_time
    # the reference: the fall-back hour twice, an hour apart, told apart by the offset
    assert [local_iso(ms(2026, 10, 25, h, 30)) for h in (0, 1)] == [
        "2026-10-25T02:30:00.000+02:00", "2026-10-25T02:30:00.000+01:00"]


def test_csv_is_every_reading_of_the_local_days_in_order_exactly(loaded, submit, keyspace, tmp_path):
    out = tmp_path / "out" / "readings.csv"
    out.parent.mkdir()
    out.write_text("an older export\n")  # replaced whole
    done = submit("export", "--tz", "Europe/Berlin", "--from", "2026-10-25", "--to", "2026-10-26", "--format", "csv",
                  "--out", str(out), "--explain")
    plan = done.stdout[done.stdout.index("== Physical Plan =="):]
    assert re.search(rf"Cassandra Direct Join \[source = source#\d+, day = day#\d+\] {keyspace}\.readings", plan)
    assert plan.count(f"{keyspace}.readings") == 1 and "BatchScan" not in plan and "CassandraScan" not in plan
    # Two Berlin days = UTC 10-24 22:00 .. 10-26 23:00: partitions 10-24, 10-25, 10-26 of each source, not 10-27.
    assert "6 readings partition(s)" in done.stdout
    assert sorted(p.name for p in out.parent.iterdir()) == ["readings.csv"]  # no temporary folder left

    with out.open(newline="") as f:
        lines = list(csv.reader(f))
    assert lines[0] == ["source", "metric", "ts", "local_time", "value"]
    assert [local for _, _, ts, local, _ in lines[1:] if local != local_iso(iso_ms(ts))] == []
    # exact texts across the change: gh-a's frames at 00:30 and 01:30 UTC are both 02:30 local, CEST then CET
    at = {ts: local for s, m, ts, local, _ in lines[1:] if s == "gh-a" and m == "temp_in"}
    assert (at["2026-10-25T00:30:00.000Z"], at["2026-10-25T01:30:00.000Z"], at["2026-10-26T22:59:00.000Z"]) == (
        "2026-10-25T02:30:00.000+02:00", "2026-10-25T02:30:00.000+01:00", "2026-10-26T23:59:00.000+01:00")
    assert at["2026-10-24T22:00:00.000Z"] == "2026-10-25T00:00:00.000+02:00"  # the day's first frame
    got = [(s, m, iso_ms(ts), float(v)) for s, m, ts, _, v in lines[1:]]
    want = expected()
    assert got == want  # every row, in order (source, ts, metric), each value the same double
    assert [repr(v) for *_, v in got if _[1] == "probe"] == [repr(r.value) for r in ODD]
    assert f"done: {len(want)} readings to {out} (csv)" in done.stdout
    # The autumn day has 25 hours of frames: every minute of gh-a from 00:00 CEST to 24:00 CET.
    frames = {ts for s, m, ts, _ in got if s == "gh-a" and m == "temp_in" and local_day(ts) == DAYS[0]}
    assert len(frames) == 25 * 60


def test_parquet_is_partitioned_by_local_day_with_typed_columns(loaded, submit, tmp_path):
    out = tmp_path / "parquet"
    done = submit("export", "--tz", "Europe/Berlin", "--from", "2026-10-25", "--to", "2026-10-26", "--source", "gh-b",
                  "--metric", "temp_in", "--metric", "humidity", "--format", "parquet", "--out", str(out))
    assert "1 source(s), 3 readings partition(s)" in done.stdout
    assert sorted(p.name for p in out.glob("day=*")) == ["day=2026-10-25", "day=2026-10-26"]
    assert len(list((out / "day=2026-10-25").glob("*.parquet"))) == 1
    table = pq.read_table(out / "day=2026-10-25")  # one day's folder: the file's own columns
    assert table.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("value").type == pa.float64()
    assert table.schema.names == ["source", "metric", "ts", "local_time", "value"]
    assert table.schema.field("local_time").type == pa.string()
    rows = []
    for day in DAYS:
        for r in pq.read_table(out / f"day={day}").to_pylist():
            assert local_day(round(r["ts"].timestamp() * 1000)) == day
            assert r["local_time"] == local_iso(round(r["ts"].timestamp() * 1000))
            rows.append((r["source"], r["metric"], round(r["ts"].timestamp() * 1000), r["value"]))
    want = expected({"gh-b"}, {"temp_in", "humidity"})
    assert sorted(rows, key=lambda r: (r[0], r[2], r[1])) == want
    day_one = [ts for _, m, ts, _ in want if m == "temp_in" and local_day(ts) == DAYS[0]]
    assert max(day_one) - min(day_one) > 24 * 3_600_000  # 25 hours
    assert f"done: {len(want)} readings to {out} (parquet)" in done.stdout


def test_a_range_without_readings_is_a_header_and_a_message(loaded, submit, tmp_path):
    out = tmp_path / "empty.csv"
    done = submit("export", "--from", "2027-01-01", "--to", "2027-01-02", "--source", "gh-a", "--format", "csv",
                  "--out", str(out))
    assert out.read_text() == "source,metric,ts,value\n"
    assert (f"export: no readings in local days 2027-01-01 … 2027-01-02 (zone UTC) of source(s) gh-a; wrote the "
            f"header only: {out}") in done.stdout


def test_an_unknown_source_is_one_line_and_exit_1(loaded, submit, keyspace, tmp_path):
    out = tmp_path / "never.csv"
    done = submit("export", "--from", "2026-10-25", "--to", "2026-10-25", "--source", "gh-a", "--source", "gh-zz",
                  "--format", "csv", "--out", str(out), check=False)
    assert done.returncode == 1
    one_error_line(done, f"export: error: unknown source(s) gh-zz: no readings on any day in keyspace {keyspace}")
    assert not out.exists()
