"""gateway/README.md's module map names every source file of both gateways, and only files that exist. The parser is
tried first on a made-up table, so the check is known to be able to fail."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "gateway" / "README.md"
PYTHON_ROOT = "gateway/python/telemetry_gateway/"
NODE_ROOT = "gateway/node/src/"
CELL_FILE = re.compile(r"`([^`]+)`")


def map_rows(text: str) -> list[tuple[str, list[str], list[str]]]:
    """The table under '## Module map': (role, Python files, Node files) per row; a cell's files are its backticked
    words ('—' names none)."""
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 4 or set(cells[0]) <= {"-"} or cells[0] == "Role":
            continue
        rows.append((cells[0], CELL_FILE.findall(cells[1]), CELL_FILE.findall(cells[2])))
    return rows


def mapped_paths(rows: list[tuple[str, list[str], list[str]]]) -> set[str]:
    """Repository paths of every file the rows name."""
    paths = set()
    for _, python, node in rows:
        paths.update(PYTHON_ROOT + name for name in python)
        paths.update(str(Path(NODE_ROOT + name)).replace("src/../", "") for name in node)
    return paths


def gateway_sources() -> set[str]:
    """Every tracked non-test source file of the two gateways: the Python package's modules, Node's src/ and bin/."""
    names = subprocess.run(["git", "ls-files", "-z", PYTHON_ROOT, NODE_ROOT, "gateway/node/bin"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    return {name for name in names if name and (name.endswith((".py", ".js")) or "/bin/" in name)
            and not (ROOT / name).is_symlink()}


def test_the_parser_on_a_made_up_map():
    text = ("# X\n\n## Module map\n\n| Role | Python | Node | Contract |\n|---|---|---|---|\n"
            "| A | `a.py` | `a.js` | spool.md |\n| B | — | `../bin/b` | — |\n| C | `spool/c.py` | — | x |\n"
            "\n## Next\n\n| D | `d.py` | `d.js` | y |\n")
    rows = map_rows(text)
    assert rows == [("A", ["a.py"], ["a.js"]), ("B", [], ["../bin/b"]), ("C", ["spool/c.py"], [])]
    assert mapped_paths(rows) == {PYTHON_ROOT + "a.py", NODE_ROOT + "a.js", "gateway/node/bin/b",
                                  PYTHON_ROOT + "spool/c.py"}


def test_every_gateway_source_file_is_in_the_map_and_every_file_named_exists():
    rows = map_rows(README.read_text())
    assert len(rows) > 60
    named = mapped_paths(rows)
    sources = gateway_sources()
    assert len(sources) > 150
    assert sorted(sources - named) == [], "gateway source files missing from gateway/README.md's module map"
    assert sorted(path for path in named if not (ROOT / path).is_file()) == [], "the map names files that do not exist"


def test_every_row_names_a_file_of_at_least_one_gateway():
    assert [role for role, python, node in map_rows(README.read_text()) if not python and not node] == []
