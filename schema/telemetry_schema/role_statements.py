"""Statements about roles on a cluster, where a role created through one node is not seen at once by another."""

from __future__ import annotations

import re
import time

from cassandra import InvalidRequest
from cassandra.cluster import Session

from telemetry_schema.migration_plan import MigrationError

ROLE_NOT_SEEN = re.compile(r"Role \S+ doesn't exist")


def set_password(session: Session, role: str, password: str) -> None:
    # Cassandra refuses a second password change of a role within 5 s (a role just created counts).
    deadline = time.monotonic() + 15
    while True:
        try:
            session.execute(f"ALTER ROLE {role} WITH PASSWORD = %s", [password])
            return
        except Exception as error:
            if "can only be changed every" not in str(error) or time.monotonic() >= deadline:
                raise MigrationError(f"cannot set the password of role {role}: {type(error).__name__}") from None
            time.sleep(1)


def execute_role_statement(session: Session, statement: str) -> None:
    """A statement, retried for a while when it names a role the coordinator cannot see yet: on a cluster the
    CREATE ROLE before it may have run on another node, and roles are read at LOCAL_ONE (the statements are
    idempotent)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            session.execute(statement, timeout=120)
            return
        except InvalidRequest as error:
            if not ROLE_NOT_SEEN.search(str(error)) or time.monotonic() >= deadline:
                raise
            time.sleep(1)
