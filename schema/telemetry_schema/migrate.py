"""schema/migrate: apply the numbered CQL files in schema/ to a keyspace, once each.

Applied versions are recorded in <keyspace>.schema_migrations (one partition). A re-run does nothing; a file that
changed after it was applied stops the run. A lightweight-transaction lock keeps two runs from interleaving.

On a cluster that authorizes (CassandraAuthorizer), the roles of schema/roles/NNN_*.cql follow, recorded under the
scope <keyspace>:roles; `--role-passwords FILE` then sets (or rotates) their passwords. Run it as an admin
(TELEMETRY_CASSANDRA_CREDENTIALS_FILE=…/admin.toml).
"""

from __future__ import annotations

import argparse
import getpass
import os
import socket
import sys
import time
import tomllib
import uuid
from pathlib import Path

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster, Session
from cassandra.query import SimpleStatement
from telemetry_cassandra import connect_cluster, login_refused, settings_from_env

from telemetry_schema.gateway_config import settings_env
from telemetry_schema.migration_plan import Applied, Migration, MigrationError, load_migrations, pending
from telemetry_schema.role_passwords import declared_roles, read_role_passwords
from telemetry_schema.role_statements import execute_role_statement, set_password

# The CQL files are read from the checkout beside the package (schema/NNN_*.cql): install it editable.
SCHEMA_DIR = Path(__file__).resolve().parents[1]
ROLES_DIR = SCHEMA_DIR / "roles"
LOCK_TTL_S = 600  # a run that dies holding the lock frees it after this long

RECORD_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    scope text,
    version int,
    name text,
    checksum text,
    applied_at timestamp,
    applied_by text,
    lock_owner text static,
    PRIMARY KEY ((scope), version)
) WITH comment = 'Applied schema/NNN_*.cql files, and the lock of schema/migrate (static column)'
"""


def program_name() -> str:
    name = Path(sys.argv[0]).name
    return name if name.startswith("telemetry-") else "schema/migrate"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=program_name(), description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="a gateway's config (e.g. /etc/telemetry-gateway/config.toml): hosts, port, keyspace, "
                        "credentials_file and TLS files from its [cassandra]; the environment and flags override it")
    # --config first: the other options' defaults come from it.
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--config", type=Path)
    known, _ = first.parse_known_args(argv)
    config_error = None
    try:
        environment = settings_env(known.config)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        environment, config_error = settings_env(None), f"cannot read --config {known.config}: {error}"
    env = environment.get
    p.add_argument("--hosts", default=env("TELEMETRY_CASSANDRA_HOSTS", "127.0.0.1"),
                   help="comma-separated contact points (env TELEMETRY_CASSANDRA_HOSTS; default 127.0.0.1)")
    p.add_argument("--port", type=int, default=int(env("TELEMETRY_CASSANDRA_PORT", "9042")))
    p.add_argument("--keyspace", default=env("TELEMETRY_CASSANDRA_KEYSPACE", "telemetry"))
    rep = p.add_mutually_exclusive_group()
    rep.add_argument("--rf", type=int, help="SimpleStrategy with this replication factor (default 1: one node)")
    rep.add_argument("--dc", action="append", metavar="NAME:RF",
                     help="NetworkTopologyStrategy: replicas per data centre, repeatable (--dc dc1:3 --dc dc2:3)")
    p.add_argument("--readings-ttl", type=int, metavar="SECONDS",
                   help="set readings' default TTL (0 = keep forever); applies to rows written afterwards")
    p.add_argument("--status", action="store_true", help="print applied and pending migrations, change nothing")
    p.add_argument("--role-passwords", type=Path, metavar="FILE",
                   help="TOML of role = \"password\" (telemetry_gateway, telemetry_analytics, telemetry_reader): "
                        "set or rotate those roles' passwords (needs authentication on the cluster)")
    p.add_argument("--tls-ca", default=env("TELEMETRY_CASSANDRA_TLS_CA"),
                   help="CA file: connect with TLS and verify the server (env TELEMETRY_CASSANDRA_TLS_CA)")
    p.add_argument("--tls-cert", default=env("TELEMETRY_CASSANDRA_TLS_CERT"),
                   help="client certificate for nodes that require one (env TELEMETRY_CASSANDRA_TLS_CERT)")
    p.add_argument("--tls-key", default=env("TELEMETRY_CASSANDRA_TLS_KEY"),
                   help="the client certificate's key (env TELEMETRY_CASSANDRA_TLS_KEY)")
    p.add_argument("--lock-wait", type=float, default=60, help="seconds to wait for another run's lock")
    args = p.parse_args(argv)
    if config_error:
        p.error(config_error)
    args.environment = environment
    if args.readings_ttl is not None and args.readings_ttl < 0:
        p.error("--readings-ttl must be 0 or more seconds")
    return args


def replication_map(args: argparse.Namespace) -> dict[str, object]:
    if args.dc:
        replication: dict[str, object] = {"class": "NetworkTopologyStrategy"}
        for item in args.dc:
            name, _, rf = item.rpartition(":")
            if not name or not rf.isdigit() or int(rf) < 1:
                raise MigrationError(f"--dc takes NAME:RF, e.g. dc1:3, not {item!r}")
            replication[name] = int(rf)
        return replication
    return {"class": "SimpleStrategy", "replication_factor": args.rf or 1}


def connect(args: argparse.Namespace) -> Cluster:
    """Hosts and TLS files from the arguments (their defaults are the TELEMETRY_CASSANDRA_* variables); the
    credentials only from the environment (_USERNAME/_PASSWORD or _CREDENTIALS_FILE), never from the command line,
    where `ps` shows them."""
    env = settings_from_env(args.environment)
    return connect_cluster(args.hosts, port=args.port, username=env["username"], password=env["password"],
                           tls_ca=args.tls_ca,
                           tls_cert=args.tls_cert, tls_key=args.tls_key, connect_timeout=10)


def cql_map(replication: dict[str, object]) -> str:
    return "{" + ", ".join(f"'{k}': '{v}'" for k, v in replication.items()) + "}"


def ensure_keyspace(session: Session, keyspace: str, replication: dict[str, object], explicit: bool) -> None:
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {cql_map(replication)}")
    row = session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                          [keyspace]).one()
    current = {k: v.rsplit(".", 1)[-1] if k == "class" else v for k, v in row.replication.items()}
    wanted = {k: str(v) for k, v in replication.items()}
    if explicit and current != wanted:
        print(f"warning: keyspace {keyspace} exists with replication {current}; not changed to {wanted}. "
              f"Changing it is an operator's step: ALTER KEYSPACE, then `nodetool repair -full` on every node.",
              file=sys.stderr)


def applied_migrations(session: Session, keyspace: str) -> list[Applied]:
    rows = session.execute("SELECT version, name, checksum FROM schema_migrations WHERE scope = %s", [keyspace])
    return [Applied(r.version, r.name, r.checksum) for r in rows if r.version is not None]


def acquire_lock(session: Session, keyspace: str, owner: str, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    statement = SimpleStatement(
        f"UPDATE schema_migrations USING TTL {LOCK_TTL_S} SET lock_owner = %s WHERE scope = %s IF lock_owner = null",
        serial_consistency_level=ConsistencyLevel.SERIAL)
    while True:
        result = session.execute(statement, [owner, keyspace])
        if result.was_applied:
            return
        holder = result.one().lock_owner
        if time.monotonic() >= deadline:
            raise MigrationError(f"another schema/migrate run ({holder}) holds the lock of {keyspace}; it is freed "
                                 f"when that run ends or after {LOCK_TTL_S} s")
        time.sleep(1)


def release_lock(session: Session, keyspace: str, owner: str) -> None:
    session.execute(SimpleStatement("UPDATE schema_migrations SET lock_owner = null WHERE scope = %s "
                                    "IF lock_owner = %s", serial_consistency_level=ConsistencyLevel.SERIAL),
                    [keyspace, owner])


def authorization_on(session: Session) -> bool:
    # Unset (None) on a node without authorization; a class name such as CassandraAuthorizer otherwise.
    row = session.execute("SELECT value FROM system_views.settings WHERE name = 'authorizer.class_name'").one()
    return row is not None and bool(row.value) and not row.value.endswith("AllowAllAuthorizer")


def apply_roles(session: Session, keyspace: str, owner: str, passwords: dict[str, str] | None) -> None:
    scope = f"{keyspace}:roles"
    migrations = load_migrations(ROLES_DIR)
    todo = pending(migrations, applied_migrations(session, scope))
    for migration in todo:
        apply(session, scope, migration, owner)
    for role, password in (passwords or {}).items():
        set_password(session, role, password)
        print(f"password of role {role} set")
    if passwords is None and todo:
        print(f"roles {', '.join(declared_roles(migrations))} have no password until "
              "`schema/migrate --role-passwords FILE` sets one")


def apply(session: Session, keyspace: str, migration: Migration, owner: str) -> None:
    for number, statement in enumerate(migration.statements, start=1):
        try:
            execute_role_statement(session, statement)
        except Exception as error:
            raise MigrationError(f"{migration.file_name}, statement {number} failed: {error}\n  {statement[:200]}"
                                 "\nNothing of this file is recorded as applied; fix the cause and run again "
                                 "(its statements are idempotent).") from error
    session.execute("INSERT INTO schema_migrations (scope, version, name, checksum, applied_at, applied_by) "
                    "VALUES (%s, %s, %s, %s, toTimestamp(now()), %s)",
                    [keyspace, migration.version, migration.name, migration.checksum, owner])
    print(f"applied {migration.file_name} ({len(migration.statements)} statements)")


def run(args: argparse.Namespace) -> int:
    migrations = load_migrations(SCHEMA_DIR)
    replication = replication_map(args)
    passwords = None
    if args.role_passwords is not None:
        passwords = read_role_passwords(args.role_passwords, declared_roles(load_migrations(ROLES_DIR)))
    try:
        cluster = connect(args)
    except ValueError as error:  # connection settings that do not go together, an unreadable TLS file
        raise MigrationError(str(error)) from None
    try:
        session = cluster.connect()
        if args.status:
            recorded = session.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s "
                                       "AND table_name = 'schema_migrations'", [args.keyspace]).one()
            applied = []
            if recorded:
                session.set_keyspace(args.keyspace)
                applied = applied_migrations(session, args.keyspace)
            todo = pending(migrations, applied)
            for record in applied:
                print(f"applied  {record.version:03d}_{record.name}.cql")
            for migration in todo:
                print(f"pending  {migration.file_name}")
            print(f"keyspace {args.keyspace}: schema version {max((a.version for a in applied), default=0)}, "
                  f"{len(todo)} pending")
            return 0

        ensure_keyspace(session, args.keyspace, replication, explicit=bool(args.rf or args.dc))
        session.set_keyspace(args.keyspace)
        session.execute(RECORD_TABLE)
        owner = f"{getpass.getuser()}@{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        acquire_lock(session, args.keyspace, owner, args.lock_wait)
        try:
            todo = pending(migrations, applied_migrations(session, args.keyspace))
            for migration in todo:
                apply(session, args.keyspace, migration, owner)
            if args.readings_ttl is not None:
                session.execute(f"ALTER TABLE readings WITH default_time_to_live = {args.readings_ttl}")
                print(f"readings default TTL set to {args.readings_ttl} s")
            if authorization_on(session):
                apply_roles(session, args.keyspace, owner, passwords)
            elif passwords is not None:
                raise MigrationError("--role-passwords given, but this cluster does not authorize (authorizer is "
                                     "AllowAllAuthorizer): start it with CASSANDRA_AUTH=1, or set "
                                     "PasswordAuthenticator and CassandraAuthorizer in cassandra.yaml")
        finally:
            release_lock(session, args.keyspace, owner)
        print(f"keyspace {args.keyspace}: schema version {migrations[-1].version if migrations else 0} "
              f"({len(todo)} applied now)")
        return 0
    finally:
        cluster.shutdown()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except MigrationError as error:
        print(f"{program_name()}: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # connection refused, auth, timeouts: say it in one line, not a traceback
        if login_refused(error):
            print(f"{program_name()}: Cassandra at {args.hosts}:{args.port} refused the login: give an admin's "
                  f"credentials in TELEMETRY_CASSANDRA_CREDENTIALS_FILE (e.g. the launcher's admin.toml) or "
                  f"TELEMETRY_CASSANDRA_USERNAME/_PASSWORD ({error})", file=sys.stderr)
            return 1
        print(f"{program_name()}: cannot migrate {args.keyspace} at {args.hosts}:{args.port}: "
              f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
