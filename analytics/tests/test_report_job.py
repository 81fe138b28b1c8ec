"""The report job on generated greenhouse-like data over a month with a 25-hour day, a day without data and an
afternoon's outage: parity with the reference computation (plain Python), and the HTML page in headless Chromium
(no console messages, every chart's points counted in the DOM against the data, gaps as breaks, a non-blank
screenshot)."""

from __future__ import annotations

import json
import math
import random
import re
import tempfile
from collections import Counter
from datetime import date, datetime, time, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from telemetry_analytics.svg_charts import BAND_FILL, BAR_FILL
from telemetry_analytics_kit import reference
from telemetry_analytics_kit.loader import greenhouse_readings

from analytics_fixtures import keyspace, loader, submit  # noqa: F401  (fixtures)
from chromium_shot import charts, dom_and_console, hex_rgb, screenshot

pytestmark = pytest.mark.cassandra
TZ = "Europe/Zagreb"
UTC = timezone.utc
OCT = [date(2026, 10, d) for d in range(1, 32)]  # Zagreb's October 25 has 25 hours
GAP_DAY = date(2026, 10, 10)  # north sends nothing that local day
OUTAGE = (datetime(2026, 10, 20, 10, tzinfo=UTC), datetime(2026, 10, 20, 13, tzinfo=UTC))  # south, 3 hours
CONFIG = """frost_below = 10.0
heat_above = 22.0
humidity_above = 80.0
low_battery_v = 3.27
"""


def ms(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() * 1000)


def night_lows(seed):
    """Some nights well below 2 °C outside, some above: greenhouse_reading's night minimum is about night_low."""
    rng = random.Random(seed)
    lows = {}
    return lambda day: lows.setdefault(day, rng.uniform(-2.0, 6.0))


def local_day(ts_ms: int) -> date:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).astimezone(ZoneInfo(TZ)).date()


def outage(ts_ms: int) -> bool:
    return OUTAGE[0].timestamp() * 1000 <= ts_ms < OUTAGE[1].timestamp() * 1000


# Two greenhouses, a frame every 10 minutes, from the last UTC hours of September (Zagreb's October starts at
# 22:00 UTC on 09-30) to the first of November; south's boards also send their battery voltage.
READINGS = ([r for r in greenhouse_readings("north", ms(date(2026, 9, 30)), ms(date(2026, 11, 1)), 600_000, 1,
                                            night_lows(1)) if local_day(r.ts_ms) != GAP_DAY]
            + [r for r in greenhouse_readings("south", ms(date(2026, 9, 30)), ms(date(2026, 11, 1)), 600_000, 2,
                                              night_lows(2), with_vbat=True) if not outage(r.ts_ms)])


@pytest.fixture(scope="module")
def report(loader, submit, tmp_path_factory):
    loader.write(READINGS)
    out = tmp_path_factory.mktemp("report")
    (out / "report.toml").write_text(CONFIG)
    done = submit("report", "--tz", TZ, "--month", "2026-10", "--config", str(out / "report.toml"), "--out",
                  str(out))
    return done, out, json.loads((out / "report.json").read_text())


def test_report_figures_equal_the_independent_computation(report):
    done, out, got = report
    want = reference.report(READINGS, TZ, OCT, "temp_in", "temp_out", 2.0, time(18), time(8))
    assert [s["source"] for s in got["sources"]] == ["north", "south"]
    for s in got["sources"]:
        w = want[s["source"]]
        iso = lambda t: datetime.fromtimestamp(t / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")  # noqa
        assert (s["readings"], s["frames"]) == (w["readings"], w["frames"])
        assert (s["first"]["ts"], s["first"]["record"]) == (iso(w["first"][0]), w["first"][1])
        assert (s["last"]["ts"], s["last"]["record"]) == (iso(w["last"][0]), w["last"][1])
        for role, key in (("inside", "inside"), ("outside", "outside")):
            for end, ref in (("lowest", f"{key}_min"), ("highest", f"{key}_max")):
                value, ts = w[ref]
                assert (s[role][end]["value"], s[role][end]["ts"]) == (value, iso(ts)), (role, end)
                assert s[role][end]["record"] == w["frames_by_ts"][ts]
            assert math.isclose(s[role]["mean"], w[f"{key}_mean"], rel_tol=1e-12)
        assert s["difference"]["pairs"] == w["diff_pairs"]
        assert math.isclose(s["difference"]["mean"], w["diff_mean"], rel_tol=1e-9)
        big, big_ts = w["diff_max"]
        assert (s["difference"]["biggest"]["value"], s["difference"]["biggest"]["ts"]) == (big, iso(big_ts))
        assert s["difference"]["biggest"]["record"] == w["frames_by_ts"][big_ts]
        nights = {date.fromisoformat(n["night"]): (n["readings_below"], (n["lowest"]["value"], n["lowest"]["ts"]))
                  for n in s["cold_nights"]}
        assert nights == {n: (count, (low[0], iso(low[1]))) for n, (count, low) in w["cold_nights"].items()}
        assert 3 < len(nights) < 28  # the generated month has cold nights and mild ones
    assert "HTML report: " in done.stdout and "north:" in done.stdout
    md = (out / "report.md").read_text()
    assert "## north" in md and "cold nights (outside below 2 °C)" in md


def test_intraday_buckets_and_days_equal_the_independent_computation(report):
    _, _, got = report
    want = reference.buckets(READINGS, TZ, OCT)
    frames = reference.frames_per_day(READINGS, TZ)
    for s in got["sources"]:
        for metric, series in s["intraday"].items():
            expected = want[(s["source"], metric)]
            assert series["t"] == sorted(expected), (s["source"], metric)
            for i, t in enumerate(series["t"]):
                lo, mean, hi, _ = expected[t]
                assert (series["min"][i], series["max"][i]) == (lo, hi)
                assert math.isclose(series["mean"][i], mean, rel_tol=1e-12)
        days = {d["day"]: d for d in s["days"]}
        assert [d["day"] for d in s["days"]] == [d.isoformat() for d in OCT]
        assert {day: d["frames"] for day, d in days.items()} == {
            d.isoformat(): frames.get((s["source"], d), 0) for d in OCT}
        assert (days["2026-10-25"]["hours"], days["2026-10-25"]["expected_frames"]) == (25, 150)
        assert any(d["frost_h"] > 0 for d in s["days"]) and any(d["heat_h"] > 0 for d in s["days"])
    north, south = got["sources"]
    assert north["days"][GAP_DAY.day - 1]["completeness"] == 0 and north["days"][0]["completeness"] == 1
    # no sample_period_s in the config: each source's median step between frames over the month, observed by Spark
    assert [(s["sample_period_s"], s["sample_period_from"]) for s in got["sources"]] == [(600, "observed")] * 2
    assert south["days"][19]["completeness"] == (144 - 18) / 144
    assert south["days"][19]["longest_gap_s"] == 3 * 3600 + 600  # 10:00 to 13:00 UTC lost, frames every 10 min
    assert south["days"][0]["battery_min"] < 3.27 and "vbat" not in north["metrics"]


def test_chromium_reports_console_messages():
    """The console check below can fail: a page with an SVG attribute Chromium cannot parse is caught."""
    page = Path(tempfile.mkdtemp()) / "bad.html"
    page.write_text('<!doctype html><svg><polyline points="1,2 x,4"/></svg>')
    _, console = dom_and_console(page)
    assert any("attribute points" in line for line in console), console


def test_html_in_headless_chromium_draws_every_bucket_and_breaks_at_gaps(report):
    _, out, got = report
    page = (out / "report.html").read_text()
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")
    dom, console = dom_and_console(out / "report.html")
    assert console == []
    drawn = charts(dom)
    by = {(c["class"].split()[1], c.get("data-source"), c.get("data-metric")): c for c in drawn}
    for s in got["sources"]:
        for metric, series in s["intraday"].items():
            chart = by[("intraday", s["source"], metric)]
            assert int(chart["data-points"]) == sum(int(p["data-points"]) for p in chart["lines"]) == len(series["t"])
        for metric, v in s["metrics"].items():
            assert sum(int(p["data-points"]) for p in by[("daily", s["source"], metric)]["lines"]) == len(v["daily"])
        assert [b["data-day"] for b in by[("bars", s["source"], None)]["bars"]] == [
            d["day"] for d in s["readings_per_day"]]
    gap_start, gap_end = (int(datetime(2026, 10, d, tzinfo=ZoneInfo(TZ)).timestamp() * 1000) for d in (10, 11))
    north = by[("intraday", "north", "temp_in")]["lines"]
    assert len(north) == 2 and int(north[0]["data-t1"]) < gap_start <= gap_end <= int(north[1]["data-t0"])
    assert [int(p["data-points"]) for p in by[("daily", "north", "temp_in")]["lines"]] == [9, 21]
    assert "2026-10-10" not in [b["data-day"] for b in by[("bars", "north", None)]["bars"]]
    south = by[("intraday", "south", "temp_in")]["lines"]
    assert len(south) == 2 and int(south[1]["data-t0"]) - int(south[0]["data-t1"]) > 3 * 3_600_000
    compare = by[("compare", None, "temp_in")]
    assert [p["data-series"] for p in compare["lines"]] == ["north", "north", "south", "south"]
    assert int(compare["data-points"]) == sum(len(s["intraday"]["temp_in"]["t"]) for s in got["sources"])
    assert re.search(r'<tr data-day="2026-10-25"><td>2026-10-25</td><td>25</td><td>150 / 150</td><td>100%</td>',
                     dom)
    assert re.search(r'<tr data-day="2026-10-10"><td>2026-10-10</td><td>24</td><td>0 / 144</td><td>0%</td>', dom)
    assert "<th>sample period</th><td>600 s (observed: the median interval between consecutive frames)</td>" in dom
    assert "the median interval between its consecutive frames over the report's days (observed)" in dom
    pixels = screenshot(out / "report.html", out / "report.png")
    colours = Counter(pixels)
    assert len(colours) > 50 and colours.most_common(1)[0][1] < 0.95 * len(pixels)  # not blank
    assert colours[hex_rgb(BAND_FILL)] > 5000  # min–max bands drawn
    assert colours[hex_rgb(BAR_FILL)] > 500  # bars drawn
