"""Hygiene the repo holds itself to, checked on every tracked file: a source file of one idea stays under 300
lines, no module imports itself round a circle, and nothing is exported that no other file uses. Each finder is a
pure function, tried first on a small made-up case so that the check is known to be able to fail."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 300
SOURCE_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".c", ".h", ".cpp", ".hpp", ".ino", ".sh"}
NODE_GATEWAY = ROOT / "gateway" / "node"
EXPORT = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)", re.M)
NODE_IMPORT = re.compile(r"""(?:from\s+|import\s*\(\s*)'(\.{1,2}/[^']+)'""")


def tracked() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in names.decode().split("\0") if name and (ROOT / name).is_file()
            and not (ROOT / name).is_symlink()]


def is_test(path: Path) -> bool:
    parts = path.relative_to(ROOT).parts
    return (any(part in ("tests", "test", "kit_tests") for part in parts[:-1]) or parts[-1].startswith("test_")
            or parts[-1].endswith(".test.js") or parts[-1] == "conftest.py")


def is_source(path: Path) -> bool:
    """Code in a language, by suffix, or an executable script (a file without suffix that starts with #!)."""
    if path.suffix in SOURCE_SUFFIXES:
        return True
    return path.suffix == "" and path.read_bytes()[:2] == b"#!"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one node (or a node that imports itself), sorted (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def python_modules(files: list[Path]) -> dict[str, Path]:
    """Dotted name → file, for every tracked module inside a package (a folder with __init__.py)."""
    modules = {}
    for path in files:
        if path.suffix != ".py" or not (path.parent / "__init__.py").exists():
            continue
        parts, folder = [] if path.name == "__init__.py" else [path.stem], path.parent
        while (folder / "__init__.py").exists():
            parts.insert(0, folder.name)
            folder = folder.parent
        modules[".".join(parts)] = path
    return modules


def python_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules a module imports, anywhere in it (type-only imports too: a circle all the same)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = ".".join(part for part in ((base if node.level else ""), node.module or "") if part)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
    return {target for target in found if target in modules and target != name}


def node_imports(path: Path) -> set[Path]:
    return {(path.parent / spec).resolve() for spec in NODE_IMPORT.findall(path.read_text())}


def unused_exports(texts: dict[Path, str]) -> list[tuple[Path, str]]:
    """Names a Node module exports that no other file names at all."""
    return [(path, name) for path, text in sorted(texts.items()) for name in EXPORT.findall(text)
            if not any(re.search(rf"\b{re.escape(name)}\b", other) for elsewhere, other in texts.items()
                       if elsewhere != path)]


def test_the_finders_find_what_they_look_for():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"a"}, "b": set()}) == [["a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    texts = {Path("a.js"): "export function used() {}\nexport const LEFT = 1;\n",
             Path("b.js"): "import { used } from './a.js';\n"}
    assert unused_exports(texts) == [(Path("a.js"), "LEFT")]


def test_no_source_file_is_longer_than_300_lines():
    long = {str(path.relative_to(ROOT)): len(path.read_text(errors="replace").splitlines())
            for path in tracked() if is_source(path) and not is_test(path)}
    assert len(long) > 100, "the source files were not found"
    assert {name: lines for name, lines in long.items() if lines > MAX_LINES} == {}


def test_no_python_package_imports_itself_round_a_circle():
    modules = python_modules(tracked())
    assert "telemetry_gateway.ingest" in modules and "telemetry_conformance" in modules
    graph = {name: python_imports(name, path, modules) for name, path in modules.items()}
    assert "telemetry_gateway.frame_acceptor" in graph["telemetry_gateway.ingest"]
    # A package's __init__ and its own modules import each other by nature: only circles beyond that count.
    assert [group for group in circles(graph)
            if not all(member.startswith(group[0] + ".") for member in group[1:])] == []


@pytest.mark.parametrize("folder", ["src", "test"])
def test_no_node_module_imports_itself_round_a_circle(folder):
    files = [path for path in tracked() if path.is_relative_to(NODE_GATEWAY / folder) and path.suffix == ".js"]
    graph = {str(path): {str(target) for target in node_imports(path)} for path in files}
    assert any(graph.values()), f"no imports found under {folder}"
    assert circles(graph) == []


def test_every_node_export_is_used_by_another_file():
    texts = {path: path.read_text() for path in tracked() if path.is_relative_to(NODE_GATEWAY)
             and (path.suffix == ".js" or path.parent.name == "bin")}
    sources = {path for path in texts if path.is_relative_to(NODE_GATEWAY / "src")}
    assert len(sources) > 50
    assert [(str(path.relative_to(ROOT)), name) for path, name in unused_exports(texts) if path in sources] == []


def test_every_public_python_name_is_used():
    """A public top-level name of a package module that its own module never uses again and no other tracked file
    names is dead code."""
    files = tracked()
    texts = {path: path.read_text(errors="replace") for path in files if path.suffix in (".py", ".md", "")
             or path.parent.name == "bin"}
    dead = []
    for name, path in python_modules(files).items():
        if is_test(path):
            continue
        for node in ast.parse(texts[path]).body:
            targets = ([node.name] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                       else [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign)
                       else [])
            for word in (t for t in targets if not t.startswith("_") and t != "main"):
                pattern = re.compile(rf"\b{re.escape(word)}\b")
                if len(pattern.findall(texts[path])) == 1 and not any(
                        pattern.search(text) for other, text in texts.items() if other != path):
                    dead.append(f"{name}.{word}")
    assert dead == []
