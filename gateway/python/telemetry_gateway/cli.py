"""telemetry-gateway run | check | counters | decode (gateway/contract/process.md)"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from .command_config import add_config_flags, config_from
from .config import Config, ConfigError, check_credentials_mode
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


def cmd_check(args: argparse.Namespace) -> int:
    from cassandra import UnresolvableContactPoints

    from .cassandra_session import build_cluster, schema_version

    config = config_from(args)
    signing_policy(config)  # a keys file that cannot be used is a config error
    check_credentials_mode(config.cassandra)
    problems = []
    spool_dir = Path(config.spool.path).parent
    probe = spool_dir if spool_dir.exists() else spool_dir.parent
    if not os.access(probe, os.W_OK):
        problems.append(f"spool folder {spool_dir} is not writable by this user")
    spool_problem = spool_integrity(Path(config.spool.path))
    if spool_problem:
        problems.append(spool_problem)
    for port in config.serial.ports:
        csv = f" csv as {port.source}: {','.join(port.columns)}" if port.format == "csv" else ""
        print(f"serial   {port.path} @ {port.baud}{csv}: {'present' if os.path.exists(port.path) else 'MISSING'}")
        if not os.path.exists(port.path):
            problems.append(f"serial port {port.path} does not exist (unplugged, or a wrong name?)")
    cluster = None
    try:
        cluster = build_cluster(config.cassandra)  # raises for host names that do not resolve
        session = cluster.connect()
        tables = {r.table_name for r in session.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", [config.cassandra.keyspace])}
        missing = {"readings", "source_days", "latest", "day_changes", "schema_migrations"} - tables
        if missing:
            problems.append(f"keyspace {config.cassandra.keyspace} lacks {', '.join(sorted(missing))}: "
                            "run schema/migrate")
        else:
            session.set_keyspace(config.cassandra.keyspace)
            version = schema_version(session, config.cassandra.keyspace)
            hosts = ", ".join(f"{h.endpoint} ({h.datacenter})" for h in cluster.metadata.all_hosts())
            print(f"cassandra {hosts}: keyspace {config.cassandra.keyspace}, schema version {version}")
    except Exception as error:
        detail = ("no host name could be resolved (spelled right? DNS up?)"
                  if isinstance(error, UnresolvableContactPoints) else str(error)[:300])
        problems.append(f"cannot reach Cassandra at {','.join(config.cassandra.hosts)}:{config.cassandra.port}: "
                        f"{type(error).__name__}: {detail}{connection_hint(str(error), config)}")
    finally:
        if cluster is not None:
            cluster.shutdown()
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    print("check: OK" if not problems else f"check: {len(problems)} problem(s)")
    return 1 if problems else 0


def spool_integrity(path: Path) -> str | None:
    """Prints the spool file's integrity (SQLite's quick check, read-only: nothing is changed); the problem, if any."""
    from .spool.salvage import check

    if not path.exists():
        print(f"spool    {path}: none yet (created at the first start)")
        return None
    integrity = check(path)
    print(f"spool    {path}: {integrity.detail if integrity.ok else 'DAMAGED'}")
    if integrity.ok:
        return None
    return (f"spool {path} is damaged ({integrity.detail[:300]}): the next start moves it aside and rebuilds the "
            "spool from what can still be read")


def connection_hint(error: str, config: Config) -> str:
    """What an operator should look at, for failures whose own text does not say it."""
    if "SSL" in error:
        # TLS 1.3 refusals often surface as a bare EOF or "internal error": name the usual causes.
        return ("; the TLS handshake failed: is tls_ca the CA that signed the node's certificate, and does the "
                "node require a client certificate (tls_cert/tls_key) signed by a CA it trusts?")
    if not config.cassandra.tls_ca and ("reset by peer" in error or "EOF" in error):
        return "; if the node accepts only TLS, set tls_ca (and tls_cert/tls_key if it wants a client certificate)"
    return ""


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
