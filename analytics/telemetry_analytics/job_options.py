"""Command-line options of the jobs. Parsing and validation are pure and run before Spark starts, so bad input
fails in a second with one line, never a traceback."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .local_days import BadInput, day_range, parse_day, parse_month, zone


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage and exits 2; keep it to one line
        raise BadInput(message)

    def parse_args(self, args=None, namespace=None):
        # argparse reports missing required options before an unknown one: name a mistyped flag first. Not with
        # --help, whose usage line would show the required options as optional.
        if args is None or "-h" in args or "--help" in args:
            return super().parse_args(args, namespace)
        required = [action for action in self._actions if action.required]
        for action in required:
            action.required = False
        try:
            _, unknown = self.parse_known_args(args, namespace)
        finally:
            for action in required:
                action.required = True
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return super().parse_args(args, namespace)


def _connection(p: argparse.ArgumentParser) -> None:
    env = os.environ.get
    p.add_argument("--hosts", default=env("TELEMETRY_CASSANDRA_HOSTS", "127.0.0.1"),
                   help="Cassandra contact points (env TELEMETRY_CASSANDRA_HOSTS; default 127.0.0.1)")
    p.add_argument("--port", type=int, default=int(env("TELEMETRY_CASSANDRA_PORT", "9042")))
    p.add_argument("--keyspace", default=env("TELEMETRY_CASSANDRA_KEYSPACE", "telemetry"))
    p.add_argument("--tz", default=env("TELEMETRY_TZ", "UTC"),
                   help="IANA time zone whose local days are aggregated (env TELEMETRY_TZ; default UTC)")


def _days(p: argparse.ArgumentParser) -> None:
    p.add_argument("--day", help="one local day, YYYY-MM-DD")
    p.add_argument("--from", dest="first", help="first local day of a range, YYYY-MM-DD")
    p.add_argument("--to", dest="last", help="last local day of a range (inclusive)")


def _range(args) -> list[date] | None:
    if args.day and (args.first or args.last):
        raise BadInput("give --day or --from/--to, not both")
    if args.day:
        return [parse_day(args.day)]
    if args.first or args.last:
        if not (args.first and args.last):
            raise BadInput("--from and --to go together")
        return day_range(parse_day(args.first), parse_day(args.last))
    return None


@dataclass(frozen=True)
class DailyOptions:
    hosts: str
    port: int
    keyspace: str
    tz: str
    days: list[date] | None   # None: --since-last or --all
    all: bool
    clock_skew_s: float
    explain: bool


def parse_daily(argv: list[str], job: str = "daily") -> DailyOptions:
    """The daily job's options; bench_read takes the same ones (job names it in the usage line)."""
    p = _Parser(prog=f"analytics/submit {job}",
                description="Daily aggregates per (source, local day, metric) into daily_summary.")
    _connection(p)
    _days(p)
    p.add_argument("--since-last", action="store_true",
                   help="(default) the days whose readings were written since the last successful run")
    p.add_argument("--all", action="store_true", help="every day: a full scan of readings")
    p.add_argument("--clock-skew", type=float, default=600, metavar="SECONDS",
                   help="--since-last also takes changes written this long before the watermark, for writers whose "
                        "clocks lag (default 600)")
    p.add_argument("--explain", action="store_true", help="print the physical plan of the readings read")
    args = p.parse_args(argv)
    zone(args.tz)
    days = _range(args)
    modes = sum([days is not None, args.all, args.since_last])
    if modes > 1:
        raise BadInput("choose one of --day, --from/--to, --since-last, --all")
    if args.clock_skew < 0:
        raise BadInput("--clock-skew must be >= 0")
    return DailyOptions(args.hosts, args.port, args.keyspace, args.tz, days, args.all, args.clock_skew, args.explain)


@dataclass(frozen=True)
class ReportOptions:
    hosts: str
    port: int
    keyspace: str
    tz: str
    days: list[date]
    config: Path
    out: Path
    title: str


def parse_report(argv: list[str], default_config: Path) -> ReportOptions:
    p = _Parser(prog="analytics/submit report",
                description="A report over a month or a day range: Markdown, HTML with charts, and a summary.")
    _connection(p)
    _days(p)
    p.add_argument("--month", help="a calendar month of local days, YYYY-MM")
    p.add_argument("--config", type=Path, default=default_config, help=f"report config (default {default_config})")
    p.add_argument("--out", type=Path, default=Path("report"), help="folder for report.md, report.html, report.json")
    args = p.parse_args(argv)
    zone(args.tz)
    days = _range(args)
    if args.month:
        if days is not None:
            raise BadInput("give --month or --day/--from/--to, not both")
        first, last = parse_month(args.month)
        days = day_range(first, last)
        title = args.month
    elif days is None:
        raise BadInput("give --month YYYY-MM or --from D --to D")
    else:
        title = f"{days[0]} – {days[-1]}" if len(days) > 1 else str(days[0])
    if not args.config.is_file():
        raise BadInput(f"no report config at {args.config}")
    return ReportOptions(args.hosts, args.port, args.keyspace, args.tz, days, args.config, args.out, title)


@dataclass(frozen=True)
class ExportOptions:
    hosts: str
    port: int
    keyspace: str
    tz: str
    days: list[date]
    sources: tuple[str, ...]   # empty: every source
    metrics: tuple[str, ...]   # empty: every metric
    format: str                # csv | parquet
    out: Path
    explain: bool
    local_time: bool = False   # a zone was given (--tz or TELEMETRY_TZ): add the local_time column


def parse_export(argv: list[str]) -> ExportOptions:
    p = _Parser(prog="analytics/submit export",
                description="The raw readings of a range of local days: one CSV file (source,metric,ts,value; ts in "
                            "UTC; with a zone given by --tz or TELEMETRY_TZ, also local_time after ts, ISO 8601 with "
                            "the offset), or a Parquet folder partitioned by local day.")
    _connection(p)
    _days(p)
    p.add_argument("--source", action="append", default=[], help="only this source (repeatable; default: all)")
    p.add_argument("--metric", action="append", default=[], help="only this metric (repeatable; default: all)")
    p.add_argument("--format", choices=("csv", "parquet"), required=True)
    p.add_argument("--out", type=Path, required=True,
                   help="csv: the file (replaced if it exists); parquet: a folder that must not exist yet")
    p.add_argument("--explain", action="store_true", help="print the physical plan of the readings read")
    args = p.parse_args(argv)
    zone(args.tz)
    days = _range(args)
    if days is None:
        raise BadInput("give --from D --to D (or --day D)")
    out = args.out
    if args.format == "csv" and out.is_dir():
        raise BadInput(f"--out {out} is a folder; csv writes one file")
    if args.format == "parquet" and out.exists():
        raise BadInput(f"--out {out} exists; parquet writes a new folder")
    given = "TELEMETRY_TZ" in os.environ or any(a == "--tz" or a.startswith("--tz=") for a in argv)
    return ExportOptions(args.hosts, args.port, args.keyspace, args.tz, days, tuple(dict.fromkeys(args.source)),
                         tuple(dict.fromkeys(args.metric)), args.format, out, args.explain, given)
