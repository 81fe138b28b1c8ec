"""telemetry-gateway check: the config, the spool folder and file, the serial ports, Cassandra and its schema
(gateway/contract/process.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .command_config import config_from
from .config import Config, check_credentials_mode
from .signing_config import signing_policy
from .spool.audit import Audit, audit
from .spool.schema import FORMAT_VERSION


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
    """Prints what check finds of the spool file (read-only: nothing is changed); the problem, if any."""
    if not path.exists():
        print(f"spool    {path}: none yet (created at the first start)")
        return None
    line, problem = spool_findings(path, audit(path))
    print(f"spool    {path}: {line}")
    return problem


def spool_findings(path: Path, found: Audit) -> tuple[str, str | None]:
    """The spool line's words after the path, and the problem (process.md, "check")."""
    integrity = found.integrity
    if not integrity.ok:
        return "DAMAGED", (f"spool {path} is damaged ({integrity.detail[:300]}): the next start moves it aside and "
                           "rebuilds the spool from what can still be read")
    if integrity.detail != "ok":
        return integrity.detail, None
    if found.newer:
        return (f"NEWER FORMAT {found.version} (this gateway reads up to {FORMAT_VERSION})",
                f"spool {path} is of format {found.version}, newer than this gateway reads ({FORMAT_VERSION}): "
                "run the newer gateway, or move the file aside")
    if found.failing:
        return (f"CHECKSUM FAILING in {found.failing} of {found.frames} frames",
                f"spool {path} holds {found.failing} frame(s) whose checksum fails: they are never sent; the gateway "
                "deletes them as it reaches them and counts them in telemetry_gateway_spool_invalid_frames_total")
    return f"ok, {found.frames} frames", None


def connection_hint(error: str, config: Config) -> str:
    """What an operator should look at, for failures whose own text does not say it."""
    if "SSL" in error:
        # TLS 1.3 refusals often surface as a bare EOF or "internal error": name the usual causes.
        return ("; the TLS handshake failed: is tls_ca the CA that signed the node's certificate, and does the "
                "node require a client certificate (tls_cert/tls_key) signed by a CA it trusts?")
    if not config.cassandra.tls_ca and ("reset by peer" in error or "EOF" in error):
        return "; if the node accepts only TLS, set tls_ca (and tls_cert/tls_key if it wants a client certificate)"
    return ""
