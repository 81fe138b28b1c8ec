"""The contract's numbers and CQL statements, read once at import from the files that declare them
(gateway/contract/constants.json and statements.cql, installed as telemetry_gateway/contract/): no module of the
gateway types a contract number or statement itself (tests/test_contract_constants.py holds that)."""

from __future__ import annotations

import json
from importlib.resources import files

_CONTRACT = files(__package__).joinpath("contract")
_DECLARED = json.loads(_CONTRACT.joinpath("constants.json").read_text(encoding="utf-8"))

# Reject reasons by where they arise: decode (PROTOCOL.md section 4), input, csv (section 7), signing.
REJECT_REASONS: dict[str, tuple[str, ...]] = {
    group: tuple(reasons) for group, reasons in _DECLARED["reject_reasons"].items()}


def contract_number(name: str) -> int:
    """A constant of constants.json, in its unit (the name says it: *_ms, *_bytes; else a count)."""
    return _DECLARED["constants"][name]["value"]


def contract_seconds(name: str) -> float:
    """A duration of constants.json (a *_ms constant) in seconds."""
    if not name.endswith("_ms"):
        raise KeyError(f"{name} is not a duration")
    return contract_number(name) / 1000


def parse_statements(text: str) -> dict[str, str]:
    """statements.cql's format (its header): `-- name: <name>` before each statement, which runs to its `;`; other
    `--` lines and empty lines are comments."""
    found: dict[str, str] = {}
    name, lines = None, []
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("-- name:"):
            name, lines = line.removeprefix("-- name:").strip(), []
        elif line and not line.startswith("--"):
            if name is None:
                raise ValueError(f"statements.cql: a statement without a name: {line}")
            lines.append(line)
            if line.endswith(";"):
                found[name], name = " ".join(lines)[:-1], None
    return found


STATEMENTS = parse_statements(_CONTRACT.joinpath("statements.cql").read_text(encoding="utf-8"))
