"""spark-submit entry point of the daily aggregate job; see analytics/README.md or `--help`."""

import sys

from telemetry_analytics.cli import run
from telemetry_analytics.daily_job import main

if __name__ == "__main__":
    run("daily", main, sys.argv[1:])
