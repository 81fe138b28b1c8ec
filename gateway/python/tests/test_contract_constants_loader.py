"""contract_constants: the contract's numbers and statements as the gateway reads them."""

import pytest

from telemetry_gateway.contract_constants import STATEMENTS, contract_number, contract_seconds, parse_statements


def test_statements_cql_format():
    text = "-- header\n\n-- name: a\nINSERT INTO t (x)\n  VALUES (?);\n-- a comment\n-- name: b\nSELECT 1;\n"
    assert parse_statements(text) == {"a": "INSERT INTO t (x) VALUES (?)", "b": "SELECT 1"}
    with pytest.raises(ValueError, match="without a name"):
        parse_statements("SELECT 1;\n")
    assert sorted(STATEMENTS) == ["day_change", "latest", "reading", "source_day"]


def test_numbers_in_their_units():
    assert contract_seconds("mark_fresh_ms") == contract_number("mark_fresh_ms") / 1000
    with pytest.raises(KeyError):
        contract_seconds("held_frames_max")  # a count, not a duration
    with pytest.raises(KeyError):
        contract_number("no_such_constant")
