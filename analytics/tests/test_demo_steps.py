"""The quiet demo's step runner: which lines reach the terminal, the per-step lines without a terminal, the log file,
a failing step's exit, and the closing rows per day."""

from __future__ import annotations

import io
import sys

import pytest

from telemetry_analytics_kit.demo_steps import SHOWN, Progress, rows_per_day, run_step

IVY_AND_SPARK = [":: resolving dependencies :: org.apache.spark#spark-submit-parent-1;1.0",
                 "\tfound com.datastax.spark#spark-cassandra-connector_2.12;3.5.1 in central",
                 "Ivy Default Cache set to: /x/.ivy2/cache", "\t|      default     |   16  |   0   |",
                 "09:41:02 WARN NativeCodeLoader: Unable to load native-hadoop library",
                 "[Stage 3:=====>        (5 + 2) / 10]"]
JOBS = ["daily: done: 120 summary rows", "report: progress: stage 4 (collect): 3/8 tasks done, 2 running",
        "report 2026-11-24 – 2026-11-26 (…): 3 source(s)", "  node-1: 2592 readings, 648 frames",
        "HTML report: /x/report.html", "analytics demo: no readings for 2026-11-26"]


def test_only_the_jobs_lines_are_shown():
    assert [line for line in IVY_AND_SPARK + JOBS if SHOWN.search(line)] == JOBS


def test_steps_write_everything_to_the_log_and_a_line_per_step(tmp_path):
    out, log = io.StringIO(), tmp_path / "spark.log"
    progress = Progress(2, out)
    lines = "\n".join(IVY_AND_SPARK + JOBS[:1])
    run_step(progress, "daily", [sys.executable, "-c", f"print({lines!r})"], log)
    assert out.getvalue().splitlines()[:2] == ["[1/2] daily …", JOBS[0]]
    assert out.getvalue().splitlines()[2].startswith("[1/2] daily: done in ")
    assert all(line in log.read_text() for line in IVY_AND_SPARK)
    with pytest.raises(SystemExit) as failed:
        run_step(progress, "report", [sys.executable, "-c", "raise SystemExit(3)"], log)
    assert failed.value.code == 3 and "[2/2] report: FAILED" in out.getvalue()


def test_rows_per_day_add_up_the_sources():
    report = {"sources": [{"readings_per_day": [{"day": "2026-11-25", "readings": 10},
                                                {"day": "2026-11-26", "readings": 5}]},
                          {"readings_per_day": [{"day": "2026-11-26", "readings": 1000}]}]}
    assert rows_per_day(report) == ["  2026-11-25         10 readings", "  2026-11-26      1,005 readings"]


def test_the_demo_loads_a_frost_night_a_hot_afternoon_and_a_low_battery():
    from telemetry_analytics_kit.demo_data import demo_readings

    now = 1_780_000_000_000
    today = now // 86_400_000 * 86_400_000
    readings = demo_readings("greenhouse-1", today - 2 * 86_400_000, now, 300_000, seed=0)
    by_metric = {m: [r.value for r in readings if r.metric == m] for m in {r.metric for r in readings}}
    assert sorted(by_metric) == ["humidity", "light", "temp_in", "temp_out", "vbat"]
    assert min(by_metric["temp_in"]) < 0 < 35 < max(by_metric["temp_in"])  # the report's frost and heat hours
    assert max(by_metric["humidity"]) > 90 and min(by_metric["vbat"]) < 3.0  # humid hours, a LOW battery day
    assert min(by_metric["temp_out"]) < 2  # a cold night
