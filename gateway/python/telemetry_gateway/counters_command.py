"""telemetry-gateway counters list | reset --source SOURCE (gateway/contract/process.md, signing.md "Re-keying a
node whose reservation was erased"): the spool's signed-frame counters, and forgetting one that belongs to a key
the node no longer has. A reset under an unchanged key would make every payload recorded under it acceptable
again, so it is refused: the cure is a new key.

The decisions are pure (key_state, reset_verdict); the shell opens the spool without creating or upgrading it,
and resets only while no other connection has it open (a running gateway)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Mapping

from .command_config import DEFAULT_CONFIG, config_from
from .frame import is_source_name
from .signing import key_fingerprint
from .spool.schema import BUSY_TIMEOUT_MS, FORMAT_VERSION

STATES = {"current": "the key the keys file holds for it", "other": "another key: starts afresh at the next start",
          "unbound": "no fingerprint (written before them): bound to the key the next start has",
          "none": "the source has no key now"}


def key_state(source: str, fingerprint: str, keys: Mapping[str, bytes]) -> str:
    """current, other, unbound or none (STATES)."""
    key = keys.get(source)
    if key is None:
        return "none"
    if not fingerprint:
        return "unbound"
    return "current" if fingerprint == key_fingerprint(key) else "other"


def reset_verdict(source: str, counter: int, state: str) -> tuple[bool, str]:
    """Whether the row may go, and the line that says so."""
    if state in ("other", "none"):
        return True, (f"counters: {source}'s counter {counter} ({STATES[state]}) removed: its next signed frame "
                      "starts it afresh")
    return False, (f"counters: {source}'s counter {counter} belongs to the key the keys file holds for it"
                   f"{' (or may: written before fingerprints)' if state == 'unbound' else ''}: a reset would "
                   "accept again every payload recorded under that key. Re-key the node (a new key in the keys "
                   f"file and the board, signing.md), or flash it with a counter floor above {counter}")


class Refused(Exception):
    """The command cannot do what was asked: its message on stderr, exit status 1."""


def _open(path: Path, timeout_s: float = BUSY_TIMEOUT_MS / 1000) -> sqlite3.Connection:
    if not path.exists():
        raise Refused(f"counters: no spool at {path} (the config's [spool] path): no counter is stored there")
    db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None, timeout=timeout_s)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > FORMAT_VERSION:
        db.close()
        raise Refused(f"counters: {path} is spool format {version}; this gateway reads up to {FORMAT_VERSION}")
    return db


def _rows(db: sqlite3.Connection) -> list[tuple[str, int, str]]:
    columns = {row[1] for row in db.execute("PRAGMA table_info(source_counters)")}
    if not columns:
        return []
    fingerprint = "key_fingerprint" if "key_fingerprint" in columns else "''"  # format 4: not upgraded here
    return db.execute(f"SELECT source, counter, {fingerprint} FROM source_counters ORDER BY source").fetchall()


def list_counters(path: Path, keys: Mapping[str, bytes]) -> int:
    db = _open(path)
    try:
        for source, counter, fingerprint in _rows(db):
            print(f"source={source} counter={counter} key={key_state(source, fingerprint, keys)}")
    finally:
        db.close()
    return 0


def reset_counter(path: Path, keys: Mapping[str, bytes], source: str) -> int:
    db = _open(path, timeout_s=0)
    try:
        # A running gateway keeps the spool open: taking the file for this connection alone fails at once then.
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        db.execute("PRAGMA synchronous=FULL")
        try:
            db.execute("BEGIN EXCLUSIVE")
        except sqlite3.OperationalError:
            raise Refused(f"counters: the spool {path} is in use (a gateway is running?): stop the gateway first, "
                          "then reset") from None
        rows = {row[0]: row for row in _rows(db)}
        if source not in rows:
            db.execute("ROLLBACK")
            print(f"counters: no counter stored for {source}: nothing to reset")
            return 0
        _, counter, fingerprint = rows[source]
        allowed, line = reset_verdict(source, counter, key_state(source, fingerprint, keys))
        if not allowed:
            db.execute("ROLLBACK")
            raise Refused(line)
        db.execute("DELETE FROM source_counters WHERE source = ?", (source,))
        db.execute("COMMIT")
        print(line)
        return 0
    finally:
        db.close()


def add_parsers(sub, add_config_flags) -> None:
    counters = sub.add_parser("counters", allow_abbrev=False, help="list the spool's signed-frame counters, or "
                              "reset a re-keyed node's (signing.md)")
    # Neither the action nor --source is required by argparse, which would report them before an unknown option:
    # cmd_counters refuses their absence.
    actions = counters.add_subparsers(dest="action")
    listing = actions.add_parser("list", allow_abbrev=False, help="every stored counter and whose key it is")
    reset = actions.add_parser("reset", allow_abbrev=False, help="forget a node's counter once its key changed "
                               "(refused under an unchanged key, and while a gateway runs)")
    reset.add_argument("--source", help="the node's source id (required)")
    for parser in (listing, reset):
        parser.add_argument("--config", help=f"TOML file (env TELEMETRY_CONFIG; default {DEFAULT_CONFIG} "
                            "if it exists)")
        parser.add_argument("--spool", metavar="PATH", help="spool file ([spool] path)")
    counters.set_defaults(func=cmd_counters)


def cmd_counters(args: argparse.Namespace) -> int:
    from .signing_config import signing_policy

    if args.action is None:
        print("telemetry-gateway counters: an action is required: list or reset", file=sys.stderr)
        return 2
    if args.action == "reset" and args.source is None:
        print("telemetry-gateway counters reset: --source is required", file=sys.stderr)
        return 2
    if args.action == "reset" and not is_source_name(args.source):
        print(f"telemetry-gateway counters reset: --source: {args.source!r} is not a source name "
              "([A-Za-z0-9_-]{1,32})", file=sys.stderr)
        return 2
    for name in ("port", "hosts", "keyspace", "metrics_listen", "log_level"):
        setattr(args, name, None)  # config_from's other flags: not options of this command
    config = config_from(args)
    keys = signing_policy(config).keys
    path = Path(config.spool.path)
    try:
        if args.action == "list":
            return list_counters(path, keys)
        return reset_counter(path, keys, args.source)
    except Refused as refused:
        print(str(refused), file=sys.stderr)
        return 1
    except sqlite3.Error as error:  # a damaged file: the next start recovers it (spool.md)
        print(f"counters: {path}: {error}", file=sys.stderr)
        return 1
