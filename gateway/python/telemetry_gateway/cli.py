"""telemetry-gateway run | check | counters | decode (gateway/contract/process.md)"""

from __future__ import annotations

import argparse
import logging
import sys

from .check_command import cmd_check
from .command_config import add_config_flags, config_from
from .config import ConfigError, check_credentials_mode
from .counters_command import add_parsers as add_counters_parsers
from .signing_config import signing_policy
from .logs import event, setup_logging
from .spool import SpoolFormatError
from .version import version_line

def cmd_run(args: argparse.Namespace) -> int:
    from .service import Gateway

    config = config_from(args)
    signing_policy(config)  # a keys file that cannot be used is a config error, before anything opens
    check_credentials_mode(config.cassandra)
    setup_logging(config.log.level)
    streams = args.input or []
    if not streams and not config.serial.ports:
        raise ConfigError("serial.ports", "required", "nothing to read: give [serial] ports, --port or --input")
    return Gateway(config, streams, exit_when_drained=args.exit_when_drained).run()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="telemetry-gateway", allow_abbrev=False,
                                description="Serial telemetry frames into Cassandra.")
    p.add_argument("--version", action="version", version=version_line(), help="print the version and exit")
    # Not required here: argparse would report the missing command before an unknown option; main() checks it.
    sub = p.add_subparsers(dest="command")
    run = sub.add_parser("run", allow_abbrev=False, help="read inputs, spool, write to Cassandra (the service)")
    add_config_flags(run)
    run.add_argument("--input", action="append", metavar="FILE", help="read a file ('-' = stdin) instead of or "
                     "besides serial ports; repeatable")
    run.add_argument("--exit-when-drained", action="store_true", help="with --input: exit once every line read "
                     "is in Cassandra (replays, benchmarks)")
    run.set_defaults(func=cmd_run)
    check = sub.add_parser("check", allow_abbrev=False, help="validate the config, connect, report the schema version")
    add_config_flags(check)
    check.set_defaults(func=cmd_check)
    add_counters_parsers(sub, add_config_flags)
    # Listed for --help; its own arguments are parsed by decode_command (main() hands them over unparsed).
    sub.add_parser("decode", add_help=False, help="decode lines from stdin or a port (--port) as the gateway "
                   "would, verified with --keys; one JSON line each (`decode --help`)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:
        print(version_line())
        return 0
    if argv[:1] == ["decode"]:
        from .decode_command import main as decode_main
        return decode_main(argv[1:])
    p = parser()
    args = p.parse_args(argv)
    if args.command is None:
        p.error("a command is required: run, check, counters or decode")
    setup_logging("warning")  # every event line in the one format, also before the config names a level
    try:
        return args.func(args)
    except ConfigError as error:
        print(f"telemetry-gateway: {error}", file=sys.stderr)
        return 2
    except (OSError, SpoolFormatError) as error:  # spool folder not creatable, a spool from a newer version
        event(logging.ERROR, "fatal", error=str(error))
        print(f"telemetry-gateway: {error}", file=sys.stderr)
        return 1
