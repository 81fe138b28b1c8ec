"""schema/migrate's decisions, without a database."""

from pathlib import Path

import pytest

from telemetry_schema.migration_plan import (
    Applied, MigrationError, load_migrations, parse_migration, pending, split_statements,
)

SCHEMA_DIR = Path(__file__).resolve().parents[1]


def test_split_drops_comments_and_keeps_literals():
    text = """
    -- a comment; with a semicolon
    CREATE TABLE IF NOT EXISTS a (k int PRIMARY KEY) WITH comment = 'it''s; fine'; // trailing
    /* block; comment */ CREATE TABLE IF NOT EXISTS "Quoted;Name" (k int PRIMARY KEY);
    CREATE FUNCTION IF NOT EXISTS f(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$ return x; $$;
    """
    assert split_statements(text) == [
        "CREATE TABLE IF NOT EXISTS a (k int PRIMARY KEY) WITH comment = 'it''s; fine'",
        'CREATE TABLE IF NOT EXISTS "Quoted;Name" (k int PRIMARY KEY)',
        "CREATE FUNCTION IF NOT EXISTS f(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS "
        "$$ return x; $$",
    ]


@pytest.mark.parametrize("text", ["CREATE TABLE t (k int PRIMARY KEY) WITH comment = 'x", "/* open", "$$ x"])
def test_split_refuses_unterminated(text):
    with pytest.raises(MigrationError):
        split_statements(text)


@pytest.mark.parametrize("statement", ["CREATE TABLE t (k int PRIMARY KEY)", "DROP TABLE t",
                                       "create index i on t (v)"])
def test_non_idempotent_ddl_is_refused(statement):
    with pytest.raises(MigrationError, match="IF NOT EXISTS"):
        parse_migration("002_x.cql", statement.encode())


@pytest.mark.parametrize("name", ["2_x.cql", "002-x.cql", "002_X.cql", "002_x.sql"])
def test_file_names_are_checked(name):
    with pytest.raises(MigrationError, match="NNN_words"):
        parse_migration(name, b"DROP TABLE IF EXISTS t")


def write(folder, files):
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_numbers_must_not_have_gaps(tmp_path):
    write(tmp_path, {"001_a.cql": "DROP TABLE IF EXISTS a", "003_c.cql": "DROP TABLE IF EXISTS c"})
    with pytest.raises(MigrationError, match="003_c.cql where 002"):
        load_migrations(tmp_path)


def test_pending_in_order_after_applied(tmp_path):
    files = {f"00{i}_m{i}.cql": f"DROP TABLE IF EXISTS t{i}" for i in (1, 2, 3)}
    migrations = load_migrations(write(tmp_path, files))
    applied = [Applied(1, "m1", migrations[0].checksum)]
    assert [m.version for m in pending(migrations, applied)] == [2, 3]
    assert pending(migrations, [Applied(m.version, m.name, m.checksum) for m in migrations]) == []


def test_changed_applied_file_is_refused(tmp_path):
    migrations = load_migrations(write(tmp_path, {"001_a.cql": "DROP TABLE IF EXISTS a"}))
    with pytest.raises(MigrationError, match="001_a.cql changed after it was applied"):
        pending(migrations, [Applied(1, "a", "0" * 64)])


def test_applied_version_without_file_is_refused(tmp_path):
    migrations = load_migrations(write(tmp_path, {"001_a.cql": "DROP TABLE IF EXISTS a"}))
    with pytest.raises(MigrationError, match="002 .b. is applied in the keyspace but its file is missing"):
        pending(migrations, [Applied(1, "a", migrations[0].checksum), Applied(2, "b", "x")])


def test_the_shipped_schema_loads():
    migrations = load_migrations(SCHEMA_DIR)
    assert migrations[0].file_name == "001_core_tables.cql"
    assert sum(len(m.statements) for m in migrations) >= 4
