"""The contract's numbers (gateway/contract/constants.json) and CQL statements (statements.cql) are declared once:
every number appears in the prose section that constants.json cites for it, and neither gateway types one of them
or a statement's text in its own source. Reads files only: no gateway code is imported. Each finder is a pure
function, tried first on made-up text so that the check is known to be able to fail."""

from __future__ import annotations

import ast
import json
import operator
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "gateway" / "contract"
DOC = json.loads((CONTRACT / "constants.json").read_text(encoding="utf-8"))
CONSTANTS = DOC["constants"]
UNITS = {"ms", "bytes", "count"}
PYTHON = ROOT / "gateway" / "python" / "telemetry_gateway"
NODE = ROOT / "gateway" / "node"

# Gateway constants whose value equals a contract number by coincidence: their own tuning, which the contract does
# not state. Each says what it is, so that a real copy cannot hide here.
NOT_CONTRACT = {
    "python/telemetry_gateway/ingest.py:GROUP_MAX": "frames per commit at most: one transaction's time and memory",
    "node/src/ingest.js:GROUP_MAX": "frames per commit at most: one transaction's time and memory",
    "python/telemetry_gateway/ingest.py:IDLE_S": "the ingest's idle wake-up",
    "python/telemetry_gateway/ingest.py:RESUME_RETRY_S": "how soon a paused ingest retries",
    "python/telemetry_gateway/sender.py:IDLE_S": "the sender's idle wake-up",
    "node/src/sender.js:IDLE_MS": "the sender's idle wake-up",
    "python/telemetry_gateway/status_server.py:SEND_BUFFER": "the kernel send buffer asked for a status connection",
    "python/telemetry_gateway/spool/safe_seqs.py:MAX_KNOWN": "per-source seq rows remembered, an internal cache",
    "node/src/spool/safe-seqs.js:MAX_KNOWN": "per-source seq rows remembered, an internal cache",
    "python/telemetry_gateway/spool/salvage.py:CHECK_ROWS": "problems PRAGMA quick_check lists at most",
    "node/src/spool/salvage.js:CHECK_ROWS": "problems PRAGMA quick_check lists at most",
    "node/src/serial-input.js:STTY_TIMEOUT_MS": "how long the stty helper may take",
    "node/src/systemd-notify.js:CHILD_TIMEOUT_MS": "how long the sd_notify helper process may take",
    "node/src/check-command.js:MAX_ERROR_CHARS": "characters of an error that `check` prints (not a log line)",
    "python/telemetry_gateway/spool/recovery.py:_INSERT_ROWS": "frames per INSERT statement when rebuilding",
    "node/src/spool/recovery.js:INSERT_ROWS": "frames per INSERT statement when rebuilding",
    "python/telemetry_gateway/reading_values.py:DOUBLE_BYTES": "the size of an IEEE 754 double",
    "node/src/reading-values.js:DOUBLE_BYTES": "the size of an IEEE 754 double",
    "node/src/encoded-batch.js:DOUBLE_BYTES": "the size of an IEEE 754 double",
    "node/src/encoded-batch.js:TIMESTAMP_BYTES": "the size of a CQL timestamp",
    "node/src/encoded-batch.js:VALUE_COUNT": "a readings row's bound values",
    "node/src/status-server.js:TICK_MS": "how often the head clocks are read",
    "python/telemetry_gateway/reading_batches.py:_CACHE_LIMIT": "partitions and layouts remembered, a cache",
    "python/telemetry_gateway/sender.py:BUSY_WAIT_S": "the sender's wait while the spool may hold more",
    "node/src/sender.js:BUSY_WAIT_MS": "the sender's wait while the spool may hold more",
}

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow,
              ast.LShift: operator.lshift, ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv,
              ast.USub: operator.neg}


def number(node: ast.AST) -> float | None:
    """The value of an expression made only of number literals and arithmetic, else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = number(node.left), number(node.right)
        return None if left is None or right is None else _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        operand = number(node.operand)
        return None if operand is None else -operand
    return None


def python_constants(text: str) -> list[tuple[int, str, float]]:
    """Module-level `NAME = <number literal expression>`: (line, name, value)."""
    found = []
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and re.fullmatch(r"_?[A-Z][A-Z0-9_]*", target.id) and node.value:
            value = number(node.value)
            if value is not None:
                found.append((node.lineno, target.id, value))
    return found


NODE_CONST = re.compile(r"^(?:export\s+)?const\s+([A-Z][A-Z0-9_]*)\s*=\s*([^;]+);", re.M)


def node_constants(text: str) -> list[tuple[int, str, float]]:
    """Top-level `const NAME = <number literal expression>;` (JavaScript's arithmetic reads as Python's)."""
    found = []
    for match in NODE_CONST.finditer(text):
        if match.group(2).strip().startswith("0x"):
            continue  # written in hex: a byte or flag code, not a quantity
        try:
            value = number(ast.parse(match.group(2).strip(), mode="eval").body)
        except SyntaxError:
            continue
        if value is not None:
            found.append((text.count("\n", 0, match.start()) + 1, match.group(1), value))
    return found


def in_contract_units(name: str, value: float) -> tuple[str, float]:
    """A gateway constant's value in constants.json's units, by its name: *_S seconds and *_MS milliseconds are
    durations (ms); anything else is compared with the contract's byte sizes and counts."""
    if name.endswith("_S"):
        return "ms", value * 1000
    if name.endswith("_MS"):
        return "ms", value
    return "other", value


def contract_values() -> dict[tuple[str, float], list[str]]:
    values: dict[tuple[str, float], list[str]] = {}
    for name, constant in CONSTANTS.items():
        kind = "ms" if constant["unit"] == "ms" else "other"
        values.setdefault((kind, constant["value"]), []).append(name)
    return values


def hard_coded(where: str, constants: list[tuple[int, str, float]], values: dict) -> list[str]:
    """`file:line NAME = value (contract: names)` for each constant equal to a contract number in its unit."""
    return [f"{where}:{line} {name} = {value:g} (contract: {', '.join(values[key])})"
            for line, name, value in constants
            if (key := in_contract_units(name, value)) in values and f"{where}:{name}" not in NOT_CONTRACT]


def statements(text: str) -> dict[str, str]:
    """statements.cql's named statements, as its header says."""
    found, name, lines = {}, None, []
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("-- name:"):
            name, lines = line.removeprefix("-- name:").strip(), []
        elif line and not line.startswith("--"):
            assert name is not None, f"a statement without a name: {line}"
            lines.append(line)
            if line.endswith(";"):
                found[name], name = " ".join(lines)[:-1], None
    return found


STATEMENTS = statements((CONTRACT / "statements.cql").read_text(encoding="utf-8"))


def cql_copies(where: str, text: str) -> list[str]:
    """`file:line` of each place that writes one of the statements' tables with its own INSERT text."""
    tables = "|".join(re.escape(re.match(r"INSERT INTO (\w+)", s).group(1)) for s in STATEMENTS.values())
    pattern = re.compile(rf"INSERT\s+INTO\s+(?:{tables})\b", re.I)
    return [f"{where}:{text.count(chr(10), 0, m.start()) + 1}" for m in pattern.finditer(text)]


def gateway_sources() -> list[tuple[str, Path]]:
    python = [p for p in PYTHON.rglob("*.py") if "contract" not in p.relative_to(PYTHON).parts]
    node = [*(NODE / "src").rglob("*.js"), *(NODE / "bin").iterdir()]
    return [(str(path.relative_to(ROOT / "gateway")), path) for path in sorted(python + node)]


def section(text: str, heading: str) -> str:
    """A Markdown section: from its heading to the next heading of the same or a higher level."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if re.fullmatch(rf"(#+) {re.escape(heading)}", line)]
    assert len(starts) == 1, f"heading {heading!r} found {len(starts)} times"
    level = len(lines[starts[0]]) - len(lines[starts[0]].lstrip("#"))
    fenced, end = False, len(lines)
    for i in range(starts[0] + 1, len(lines)):
        fenced ^= lines[i].startswith("```")  # a code block's `#` lines are not headings
        if not fenced and re.match(rf"#{{1,{level}}} ", lines[i]):
            end = i
            break
    return "\n".join(lines[starts[0]:end])


def spellings(value: int, unit: str) -> list[str]:
    """How prose may write a value: 5000 or 5,000; a duration also in s (5 s, 300 seconds), a size in KiB or MiB."""
    found = [f"{value:,}", str(value)]
    if unit == "ms":
        seconds = f"{value / 1000:g}"
        found += [f"{seconds} s", f"{seconds} seconds", f"{seconds} whole seconds"]
    if unit == "bytes":
        found += [f"{value >> 20} MiB"] if value % (1 << 20) == 0 else []
        found += [f"{value >> 10} KiB"] if value % (1 << 10) == 0 else []
    return found


def stated(text: str, value: int, unit: str) -> bool:
    return any(re.search(rf"(?<![\w.,]){re.escape(form)}(?![\w]|[.,]\d)", text) for form in spellings(value, unit))


def test_the_finders_find_what_they_look_for():
    made_up = "import x\nMAX_HELD = 5000  # copied\nLIMIT_S = 30.0\nOTHER = 7\nNAME: int = 1 << 20\nlate = 5000\n"
    values = contract_values()
    assert [name for _, name, _ in python_constants(made_up)] == ["MAX_HELD", "LIMIT_S", "OTHER", "NAME"]
    assert hard_coded("a.py", python_constants(made_up), values) == [
        "a.py:2 MAX_HELD = 5000 (contract: held_frames_max)",
        "a.py:3 LIMIT_S = 30 (contract: receipt_ceiling_near_ms, seq_rows_interval_ms, stage_stall_ms)",
        "a.py:5 NAME = 1.04858e+06 (contract: spool_journal_size_limit_bytes, reserve_bytes, disk_full_free_bytes, "
        "room_margin_bytes, http_unread_bytes_max)"]
    js = ("export const FRESH_MS = 300_000;\nconst TWO = 2 ** 31 - 2;\n  const INNER = 64;\nconst B = 1n;\n"
          "const LF = 0x0a;\n")
    assert hard_coded("a.js", node_constants(js), values) == ["a.js:1 FRESH_MS = 300000 (contract: mark_fresh_ms, "
                                                              "status_window_ms, status_bucket_ms)"]
    assert hard_coded("a.js", node_constants("const HELD = CONSTANT('held_frames_max');\n"), values) == []
    assert cql_copies("b.js", "x\nconst Q = 'insert into  latest (source) VALUES (?)';\n// INSERT INTO other\n") \
        == ["b.js:2"]
    assert statements("-- c\n-- name: a\nSELECT 1\n  FROM t;\n\n-- name: b\nX;\n") == {"a": "SELECT 1 FROM t",
                                                                                      "b": "X"}
    prose = "# A\n## B\nwaits 2 s, then 5,000 frames, 256 KiB\n```\n# no heading\n```\n## C\n10 s\n"
    assert stated(section(prose, "B"), 2000, "ms") and stated(section(prose, "B"), 5000, "count")
    assert stated(section(prose, "B"), 262144, "bytes") and not stated(section(prose, "B"), 10000, "ms")
    assert not stated("25,000 frames and 1.5 s", 5000, "count") and not stated("1.5 s", 5000, "ms")


def test_every_constant_is_well_formed_and_stated_where_it_cites():
    assert len(CONSTANTS) > 40
    unstated = []
    for name, constant in CONSTANTS.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name) and constant["unit"] in UNITS and constant["meaning"], name
        assert type(constant["value"]) is int and constant["value"] > 0, name
        assert name.endswith("_ms") == (constant["unit"] == "ms"), f"{name}: a duration's name ends in _ms"
        cited = (CONTRACT / constant["section"]["file"]).read_text(encoding="utf-8")
        if not stated(section(cited, constant["section"]["heading"]), constant["value"], constant["unit"]):
            unstated.append(f"{name} = {constant['value']} {constant['unit']}: not in {constant['section']}")
    assert unstated == []


def test_the_reject_reasons_are_the_rejects_counter_labels():
    groups = DOC["reject_reasons"]
    reasons = [reason for group in groups.values() for reason in group]
    assert len(set(reasons)) == len(reasons)
    metrics = json.loads((CONTRACT / "metrics.json").read_text(encoding="utf-8"))["metrics"]
    rejects = next(family for family in metrics if family["name"] == "telemetry_gateway_rejects_total")
    assert rejects["labels"]["reason"] == reasons
    table = section((ROOT / "firmware" / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8"),
                    "4. Rejection reasons")
    assert [reason for reason in groups["decode"] + groups["csv"] if f"`{reason}`" not in table] == []


def test_the_statements_are_in_statements_cql_only():
    assert sorted(STATEMENTS) == ["day_change", "latest", "reading", "source_day"]
    prose = (CONTRACT / "cassandra-writes.md").read_text(encoding="utf-8")
    assert "statements.cql" in prose and "```cql" not in prose
    copies = [copy for where, path in gateway_sources() for copy in cql_copies(where, path.read_text())]
    assert len(gateway_sources()) > 100 and copies == []


def test_no_gateway_types_a_contract_number():
    values = contract_values()
    found = []
    for where, path in gateway_sources():
        text = path.read_text()
        found += hard_coded(where, python_constants(text) if path.suffix == ".py" else node_constants(text), values)
    assert found == []


def test_every_exception_names_a_constant_that_exists():
    for key in NOT_CONTRACT:
        where, name = key.rsplit(":", 1)
        text = (ROOT / "gateway" / where).read_text()
        assert re.search(rf"^(?:export\s+)?(?:const\s+)?{name}\b", text, re.M), key


def test_the_python_package_ships_every_contract_file_it_reads():
    """The Python gateway reads contract files as package data (the Node gateway's install copies contract/ whole):
    each contract file that its source names must be listed in pyproject.toml, or an installed gateway lacks it."""
    source = "\n".join(path.read_text() for _, path in gateway_sources() if path.suffix == ".py")
    named = {path.name for path in CONTRACT.iterdir() if path.is_file() and f'"{path.name}"' in source}
    assert {"constants.json", "statements.cql", "metrics.json", "spool.sql"} <= named
    pyproject = (ROOT / "gateway" / "python" / "pyproject.toml").read_text(encoding="utf-8")
    assert sorted(name for name in named if f'"contract/{name}"' not in pyproject) == []
