"""`python -m telemetry_analytics.job_check JOB [OPTIONS]`: analytics/submit checks a job's options with the job's own
parser before spark-submit, so a mistyped flag or a bad value is refused in a second, naming it, without a JVM."""

from __future__ import annotations

import sys

from .cli import run
from .job_options import parse_daily, parse_export, parse_report
from .report_job import DEFAULT_CONFIG

PARSERS = {
    "daily": parse_daily,
    "bench_read": lambda argv: parse_daily(argv, "bench_read"),
    "export": parse_export,
    "report": lambda argv: parse_report(argv, DEFAULT_CONFIG),
}

if __name__ == "__main__":
    job = sys.argv[1]
    run(job, lambda argv: PARSERS[job](argv) and 0, sys.argv[2:])
