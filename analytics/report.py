"""spark-submit entry point of the report job; see analytics/README.md or `--help`."""

import sys

from telemetry_analytics.cli import run
from telemetry_analytics.report_job import main

if __name__ == "__main__":
    run("report", main, sys.argv[1:])
