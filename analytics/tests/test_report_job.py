"""The report job on generated greenhouse-like data: parity with reference.report (plain Python), and the HTML
page rendered by headless Chromium with its charts."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from datetime import date, datetime, time, timezone

import pytest

from telemetry_analytics.svg_charts import BAND_FILL, BAR_FILL
from telemetry_analytics_kit import reference
from telemetry_analytics_kit.loader import greenhouse_readings

from analytics_fixtures import keyspace, loader, submit  # noqa: F401  (fixtures)
from chromium_shot import hex_rgb, screenshot

pytestmark = pytest.mark.cassandra
TZ = "Europe/Zagreb"
UTC = timezone.utc
FEB = [date(2026, 2, d) for d in range(1, 29)]


def ms(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() * 1000)


def night_lows(seed):
    """Some nights well below 2 °C outside, some above: greenhouse_reading's night minimum is about night_low."""
    rng = random.Random(seed)
    lows = {}
    return lambda day: lows.setdefault(day, rng.uniform(-2.0, 6.0))


# Two greenhouses, a frame every 10 minutes, from the last UTC hours of January (Zagreb's February starts at
# 23:00 UTC on 01-31) to the first of March, plus a source with other metrics only.
READINGS = (greenhouse_readings("north", ms(date(2026, 1, 31)), ms(date(2026, 3, 1)), 600_000, 1, night_lows(1))
            + greenhouse_readings("south", ms(date(2026, 1, 31)), ms(date(2026, 3, 1)), 600_000, 2, night_lows(2)))


@pytest.fixture(scope="module")
def report(loader, submit, tmp_path_factory):
    loader.write(READINGS)
    out = tmp_path_factory.mktemp("report")
    done = submit("report", "--tz", TZ, "--month", "2026-02", "--out", str(out))
    return done, out, json.loads((out / "report.json").read_text())


def test_report_figures_equal_the_independent_computation(report):
    done, out, got = report
    want = reference.report(READINGS, TZ, FEB, "temp_in", "temp_out", 2.0, time(18), time(8))
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
        assert 3 < len(nights) < 27  # the generated month has cold nights and mild ones
    assert "HTML report: " in done.stdout and "north:" in done.stdout
    md = (out / "report.md").read_text()
    assert "## north" in md and "cold nights (outside below 2 °C)" in md


def test_html_renders_with_charts_in_headless_chromium(report):
    _, out, got = report
    page = (out / "report.html").read_text()
    metrics = sum(len(s["metrics"]) for s in got["sources"])
    assert page.count('<svg class="chart band"') == metrics == 8
    assert page.count('<svg class="chart bars"') == 2
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")
    pixels = screenshot(out / "report.html", out / "report.png")
    colours = Counter(pixels)
    assert len(colours) > 50 and colours.most_common(1)[0][1] < 0.95 * len(pixels)  # not blank
    assert colours[hex_rgb(BAND_FILL)] > 5000  # min–max bands drawn
    assert colours[hex_rgb(BAR_FILL)] > 500  # bars drawn
