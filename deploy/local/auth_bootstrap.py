"""Makes sure a node (or cluster) started with PasswordAuthenticator has the project's admin role, and that the
default `cassandra` superuser no longer logs in.

  auth_bootstrap.py --hosts H1,H2 --admin-file STATE/admin.toml [--system-auth-dc DC:RF] [--wait S]

- admin.toml answers (a login with it works): nothing to do.
- Otherwise log in as cassandra/cassandra (Cassandra creates it some seconds after CQL opens: retried until
  --wait), create `telemetry_admin` (superuser, a random password), write admin.toml (0600, the gateway's
  credentials_file format), then, as telemetry_admin, take away `cassandra`'s login and superuser status and give it
  a random password nobody keeps.
- --system-auth-dc: system_auth replicated like the data (NetworkTopologyStrategy); the caller repairs it.

TLS files and other settings come from the TELEMETRY_CASSANDRA_* variables (telemetry_cassandra). No password is
printed or put on a command line.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
import time
from pathlib import Path

from cassandra.cluster import NoHostAvailable
from cassandra.policies import RoundRobinPolicy
from telemetry_cassandra import connect_cluster, login_refused, read_credentials_file, settings_from_env

ADMIN_ROLE = "telemetry_admin"
DEFAULT_SUPERUSER = ("cassandra", "cassandra")


def say(text: str) -> None:
    print(f"cassandra auth: {text}", flush=True)


def session_as(hosts: list[str], username: str, password: str):
    env = settings_from_env(os.environ, default_hosts=",".join(hosts))
    cluster = connect_cluster(hosts, port=env["port"], username=username, password=password, tls_ca=env["tls_ca"],
                              tls_cert=env["tls_cert"], tls_key=env["tls_key"], connect_timeout=5,
                              control_connection_timeout=5, load_balancing_policy=RoundRobinPolicy())
    try:
        return cluster, cluster.connect()
    except Exception:
        cluster.shutdown()
        raise


def try_login(hosts: list[str], username: str, password: str) -> tuple | None:
    """(cluster, session), or None when the node refused the credentials; other errors propagate."""
    try:
        return session_as(hosts, username, password)
    except NoHostAvailable as error:
        if login_refused(error):
            return None
        raise


def login_retrying(hosts: list[str], username: str, password: str, wait_s: float):
    deadline = time.monotonic() + wait_s
    while True:
        try:
            found = try_login(hosts, username, password)
        except NoHostAvailable:
            found = None  # not answering yet
        if found is not None:
            return found
        if time.monotonic() >= deadline:
            return None
        time.sleep(1)


def write_private(path: Path, text: str) -> None:
    """0600 from the first byte (never briefly world-readable), then renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def create_admin(hosts: list[str], admin_file: Path, wait_s: float) -> None:
    found = login_retrying(hosts, *DEFAULT_SUPERUSER, wait_s)
    if found is None:
        raise SystemExit(f"cassandra auth: neither {admin_file} nor the default superuser can log in at "
                         f"{','.join(hosts)} (waited {wait_s:.0f} s). If this node's data was made with another "
                         f"admin.toml, restore that file, or wipe the node's data.")
    cluster, session = found
    password = secrets.token_urlsafe(24)
    pending = admin_file.with_name(admin_file.name + ".new")
    # Written before the role exists: a crash in between leaves a file for a role that may exist, never a role
    # whose password is lost.
    write_private(pending, f"username = {toml_string(ADMIN_ROLE)}\npassword = {toml_string(password)}\n")
    try:
        # A role left by an earlier attempt gets the new password (Cassandra refuses two password changes of a role
        # within 5 s, so CREATE IF NOT EXISTS followed by ALTER is not an option).
        exists = session.execute("SELECT role FROM system_auth.roles WHERE role = %s", [ADMIN_ROLE]).one()
        verb = "ALTER" if exists else "CREATE"
        session.execute(f"{verb} ROLE {ADMIN_ROLE} WITH SUPERUSER = true AND LOGIN = true AND PASSWORD = %s",
                        [password])
    finally:
        cluster.shutdown()
    os.replace(pending, admin_file)
    say(f"created role {ADMIN_ROLE}; its credentials are in {admin_file} (0600)")


def lock_default_superuser(hosts: list[str], admin_file: Path, wait_s: float) -> None:
    username, password = read_credentials_file(str(admin_file))
    found = login_retrying(hosts, username, password, wait_s)  # a new role takes a moment on every node
    if found is None:
        raise SystemExit(f"cassandra auth: the role in {admin_file} cannot log in at {','.join(hosts)}")
    cluster, session = found
    try:
        session.execute(f"ALTER ROLE {DEFAULT_SUPERUSER[0]} WITH SUPERUSER = false AND LOGIN = false "
                        f"AND PASSWORD = %s", [secrets.token_urlsafe(24)])
    finally:
        cluster.shutdown()
    say(f"the default superuser '{DEFAULT_SUPERUSER[0]}' can no longer log in")


def replicate_system_auth(hosts: list[str], admin_file: Path, dc_rf: str) -> None:
    dc, _, rf = dc_rf.rpartition(":")
    if not dc or not rf.isdigit():
        raise SystemExit(f"cassandra auth: --system-auth-dc takes DC:RF, not {dc_rf!r}")
    cluster, session = session_as(hosts, *read_credentials_file(str(admin_file)))
    try:
        session.execute("ALTER KEYSPACE system_auth WITH replication = "
                        f"{{'class': 'NetworkTopologyStrategy', '{dc}': {int(rf)}}}")
    finally:
        cluster.shutdown()
    say(f"system_auth replicated {dc}:{rf} (repair it on every node)")


def main() -> None:
    logging.disable(logging.WARNING)  # the driver logs every refused or failed connection attempt
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hosts", required=True)
    p.add_argument("--admin-file", required=True, type=Path)
    p.add_argument("--system-auth-dc", metavar="DC:RF")
    p.add_argument("--wait", type=float, default=60.0, help="seconds to wait for the default superuser")
    args = p.parse_args()
    hosts = [h for h in args.hosts.split(",") if h]
    admin_ok = False
    if args.admin_file.exists():
        found = try_login(hosts, *read_credentials_file(str(args.admin_file)))
        if found is not None:
            found[0].shutdown()
            admin_ok = True
    if not admin_ok:
        create_admin(hosts, args.admin_file, args.wait)
        lock_default_superuser(hosts, args.admin_file, args.wait)
    else:
        default = try_login(hosts, *DEFAULT_SUPERUSER)  # a start that died between creating and locking
        if default is not None:
            default[0].shutdown()
            lock_default_superuser(hosts, args.admin_file, args.wait)
    if args.system_auth_dc:
        replicate_system_auth(hosts, args.admin_file, args.system_auth_dc)
    if admin_ok:
        say(f"role in {args.admin_file} logs in")


if __name__ == "__main__":
    try:
        main()
    except NoHostAvailable as error:
        sys.exit(f"cassandra auth: no node answered: {error}")
