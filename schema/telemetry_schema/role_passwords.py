"""The roles of schema/roles/*.cql and their passwords: the pure part of `schema/migrate --role-passwords FILE`.

The file is TOML, one `role_name = "password"` per role (telemetry_gateway, telemetry_analytics, telemetry_reader).
Errors name the file and the role, never a password.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from telemetry_schema.migration_plan import Migration, MigrationError

_CREATE_ROLE = re.compile(r"^CREATE ROLE IF NOT EXISTS (\w+)", re.IGNORECASE)


def declared_roles(migrations: list[Migration]) -> list[str]:
    """The roles the role migrations create, in file order."""
    return [m.group(1) for migration in migrations for statement in migration.statements
            if (m := _CREATE_ROLE.match(statement))]


def read_role_passwords(path: Path, roles: list[str]) -> dict[str, str]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise MigrationError(f"cannot read --role-passwords file {path}: {error}") from None
    unknown = sorted(set(data) - set(roles))
    if unknown:
        raise MigrationError(f"--role-passwords file {path} names roles that schema/roles does not create: "
                             f"{', '.join(unknown)} (known: {', '.join(roles)})")
    for role, password in data.items():
        if not isinstance(password, str) or not password:
            raise MigrationError(f"--role-passwords file {path}: {role} must be a non-empty string")
    if not data:
        raise MigrationError(f"--role-passwords file {path} sets no password (known roles: {', '.join(roles)})")
    return data
