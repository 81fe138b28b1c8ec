"""schema/migrate --role-passwords: which roles schema/roles creates, and the passwords file's rules (pure)."""

from pathlib import Path

import pytest

from telemetry_schema.migrate import ROLES_DIR
from telemetry_schema.migration_plan import MigrationError, load_migrations
from telemetry_schema.role_passwords import declared_roles, read_role_passwords

ROLES = ["telemetry_gateway", "telemetry_analytics", "telemetry_reader"]


def test_the_role_migrations_create_the_three_roles():
    assert declared_roles(load_migrations(ROLES_DIR)) == ROLES


def test_a_file_with_some_of_the_roles_sets_those(tmp_path):
    path = tmp_path / "pw.toml"
    path.write_text('telemetry_reader = "r-1"\ntelemetry_gateway = "g \\"quoted\\""\n')
    assert read_role_passwords(path, ROLES) == {"telemetry_reader": "r-1", "telemetry_gateway": 'g "quoted"'}


@pytest.mark.parametrize("text, message", [
    ('telemetry_admin = "hunter2"\n', "names roles that schema/roles does not create: telemetry_admin"),
    ('telemetry_reader = 5\n', "telemetry_reader must be a non-empty string"),
    ('telemetry_reader = ""\n', "telemetry_reader must be a non-empty string"),
    ("", "sets no password"),
    ('telemetry_reader = "unterminated\n', "cannot read --role-passwords file"),
])
def test_a_bad_file_is_refused_without_showing_a_password(tmp_path, text, message):
    path = tmp_path / "pw.toml"
    path.write_text(text)
    with pytest.raises(MigrationError, match=message) as refused:
        read_role_passwords(path, ROLES)
    assert "hunter2" not in str(refused.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(MigrationError, match=str(tmp_path / "absent.toml")):
        read_role_passwords(Path(tmp_path / "absent.toml"), ROLES)
