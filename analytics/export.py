"""spark-submit entry point of the export job; see analytics/README.md or `--help`."""

import sys

from telemetry_analytics.cli import run
from telemetry_analytics.export_job import main

if __name__ == "__main__":
    run("export", main, sys.argv[1:])
