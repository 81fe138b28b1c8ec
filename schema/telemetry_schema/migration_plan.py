"""What schema/migrate has to do, decided without a database: the numbered CQL files, their statements, and which
of them are pending given what a keyspace records as applied."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = re.compile(r"(\d{3})_([a-z0-9_]+)\.cql")
# DDL that cannot be re-run safely. Statements are re-run when a migration failed half way (CQL DDL has no
# transactions), so every CREATE/DROP must say IF [NOT] EXISTS.
_NOT_IDEMPOTENT = re.compile(r"^\s*(CREATE|DROP)\s+(?!.*\bIF\s+(NOT\s+)?EXISTS\b)", re.IGNORECASE | re.DOTALL)


class MigrationError(Exception):
    """A problem a human must fix; the message says what and how."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]
    checksum: str  # sha256 of the file's bytes

    @property
    def file_name(self) -> str:
        return f"{self.version:03d}_{self.name}.cql"


@dataclass(frozen=True)
class Applied:
    version: int
    name: str
    checksum: str


def split_statements(text: str) -> list[str]:
    """CQL text → statements without their ';', comments dropped, string literals kept intact."""
    statements, current = [], []
    i, n = 0, len(text)
    while i < n:
        c, pair = text[i], text[i:i + 2]
        if pair in ("--", "//"):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif pair == "/*":
            end = text.find("*/", i + 2)
            if end < 0:
                raise MigrationError("unterminated /* comment")
            i = end + 2
        elif c in "'\"" or pair == "$$":
            quote = "$$" if pair == "$$" else c
            end = i + len(quote)
            while True:
                end = text.find(quote, end)
                if end < 0:
                    raise MigrationError(f"unterminated {quote} literal")
                if quote != "$$" and text[end + 1:end + 2] == quote:  # '' or "" escapes the quote
                    end += 2
                    continue
                break
            current.append(text[i:end + len(quote)])
            i = end + len(quote)
        elif c == ";":
            statements.append("".join(current))
            current = []
            i += 1
        else:
            current.append(c)
            i += 1
    statements.append("".join(current))
    return [" ".join(s.split()) for s in statements if s.strip()]


def parse_migration(file_name: str, data: bytes) -> Migration:
    match = FILE_NAME.fullmatch(file_name)
    if match is None:
        raise MigrationError(f"{file_name}: migration files are named NNN_words.cql")
    statements = split_statements(data.decode("utf-8"))
    if not statements:
        raise MigrationError(f"{file_name}: no statement")
    for statement in statements:
        if _NOT_IDEMPOTENT.match(statement):
            raise MigrationError(f"{file_name}: '{statement[:60]}…' must say IF NOT EXISTS / IF EXISTS, "
                                 "so that a migration that failed half way can be run again")
    return Migration(int(match.group(1)), match.group(2), tuple(statements), hashlib.sha256(data).hexdigest())


def load_migrations(folder: Path) -> list[Migration]:
    migrations = sorted((parse_migration(p.name, p.read_bytes()) for p in folder.glob("*.cql")),
                        key=lambda m: m.version)
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise MigrationError(f"migration numbers must run 001, 002, … without gaps or repeats; "
                                 f"found {migration.file_name} where {expected:03d} was expected")
    return migrations


def pending(migrations: list[Migration], applied: list[Applied]) -> list[Migration]:
    """The migrations still to apply, in order; refuses when the record and the files disagree."""
    by_version = {m.version: m for m in migrations}
    for record in applied:
        migration = by_version.get(record.version)
        if migration is None:
            raise MigrationError(f"version {record.version:03d} ({record.name}) is applied in the keyspace but its "
                                 "file is missing here: this checkout is older than the database")
        if migration.checksum != record.checksum:
            raise MigrationError(f"{migration.file_name} changed after it was applied (applied sha256 "
                                 f"{record.checksum[:12]}…, file now {migration.checksum[:12]}…). Applied "
                                 "migrations are never edited: restore the file and add a new numbered one")
    done = {record.version for record in applied}
    return [m for m in migrations if m.version not in done]
