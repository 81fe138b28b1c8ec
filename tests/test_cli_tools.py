"""Every command-line tool of the repo: `TOOL --help` exits 0 with a usage line on stdout, `TOOL
--bogus-flag-xyz` exits 2 with a line on stderr naming the flag and nothing on stdout, and neither writes a file in
the repo or starts anything slow: a build, a download, a JVM, Cassandra or Spark (make, java, curl, npm ... are
stand-ins on PATH that log their call, SPARK_HOME points nowhere, and each run must end within TIME_LIMIT_S). The
same for each subcommand. TOOLS lists the tools: a tracked executable, or a package's console script, missing from
it fails the test, so a new tool is checked from its first commit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
BOGUS = "--bogus-flag-xyz"
TIME_LIMIT_S = 20  # a guard against a JVM or a build being started, not a speed measure: these answer in ~1 s

NODE_GATEWAY_SUBS = ("run", "check", "counters", "counters list", "counters reset", "decode")
# Tool (its path in the repo, or an installed entry point's name) -> its subcommands, each checked as TOOL SUB --help
# and TOOL SUB --bogus-flag-xyz.
TOOLS: dict[str, tuple[str, ...]] = {
    ".ci/run": (),
    "analytics/bench": (),
    "analytics/bench-export": (),
    "analytics/demo": (),
    "analytics/submit": ("daily", "report", "export", "bench_read"),
    "deploy/cluster/bench": (),
    "deploy/cluster/down": (),
    "deploy/cluster/node": ("1 start", "1 stop", "1 status"),
    "deploy/cluster/reference-node": ("start", "stop"),
    "deploy/cluster/repair": (),
    "deploy/cluster/replace": (),
    "deploy/cluster/status": (),
    "deploy/cluster/up": (),
    "deploy/demo/run": (),
    # cqlsh and nodetool: their arguments are cqlsh's and nodetool's own (--help is theirs).
    "deploy/local/cassandra": ("start", "stop", "kill", "status", "fetch", "logs"),
    "deploy/local/commitlog-power-cut": (),
    "deploy/notify/telemetry-alert-webhook": (),
    "deploy/pi/footprint": (),
    "deploy/pi/install": (),
    "deploy/pi/uninstall": (),
    "deploy/setup/dated-results": (),
    "deploy/setup/debian-packages": (),
    "deploy/tls/make-test-certs": (),
    "firmware/scripts/avrdude-then-forget": (),
    "firmware/scripts/fetch-rf24": (),
    "firmware/scripts/make-keys": (),
    "firmware/scripts/node-key-eeprom": (),
    "firmware/scripts/provision": (),
    "firmware/scripts/radio-sim": (),
    "firmware/scripts/radio-sim-bench": (),
    "firmware/scripts/run-tests": (),
    "firmware/scripts/signing-time": (),
    "firmware/scripts/sketch-sizes": (),
    "gateway/bench": (),
    "gateway/node/bin/telemetry-gateway-node": NODE_GATEWAY_SUBS,
    "schema/migrate": (),
    "telemetry-gateway": NODE_GATEWAY_SUBS,
    "telemetry-board-sim": (),
    "telemetry-schema-migrate": (),
}
# Installed entry points (console scripts) and how to start them from the checkout.
ENTRY_POINTS = {
    "telemetry-gateway": [str(PYTHON), "-m", "telemetry_gateway"],
    "telemetry-board-sim": [str(ROOT / ".venv" / "bin" / "telemetry-board-sim")],
    "telemetry-schema-migrate": [str(PYTHON), "-m", "telemetry_schema.migrate"],
}
# Tracked executables that are not commands a person runs, with the reason. None so far.
NOT_COMMANDS: dict[str, str] = {}

# What a refusal or a help text must never start: each of these is a stand-in on PATH that logs its call.
SLOW_PROGRAMS = ("make", "java", "curl", "wget", "npm", "npx", "pip", "mvn", "spark-submit", "avrdude", "simavr",
                 "avr-gcc", "gcc", "cc", "g++", "cmake", "nodetool", "cqlsh", "apt-get", "systemctl", "tar")
# Generated folders whose contents legitimately change under other processes (a CI node's data, caches).
UNWATCHED = {".git", "node_modules", ".venv", ".state", "__pycache__", ".pytest_cache", ".hypothesis"}


def tracked_executables() -> list[str]:
    """Tracked files, outside test folders and node_modules, with the executable bit or a #! line."""
    out = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    found = []
    for entry in filter(None, out.split("\0")):
        mode, _, _, path = entry.split(None, 3)
        parts = path.split("/")
        if mode == "120000" or any(part in ("tests", "test", "node_modules") for part in parts[:-1]):
            continue
        file = ROOT / path
        if file.is_file() and (mode == "100755" or file.read_bytes()[:2] == b"#!"):
            found.append(path)
    return sorted(found)


def console_scripts() -> list[str]:
    """Every [project.scripts] name of the repo's Python packages, and every bin of its Node package.json files."""
    names = []
    out = subprocess.run(["git", "ls-files", "-z", "*pyproject.toml", "*package.json"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    for path in filter(None, out.split("\0")):
        if "node_modules/" in path:
            continue
        if path.endswith("pyproject.toml"):
            names += tomllib.loads((ROOT / path).read_text()).get("project", {}).get("scripts", {})
        else:
            bins = json.loads((ROOT / path).read_text()).get("bin", {})
            folder = str(Path(path).parent)
            names += [str(Path(folder, target)) for target in bins.values()]
    return sorted(names)


def unlisted(tools: dict, exceptions: dict, executables: list[str], scripts: list[str]) -> list[str]:
    return sorted(set(executables + scripts) - set(tools) - set(exceptions))


def test_unlisted_finds_a_new_tool():
    assert unlisted({"a": ()}, {"b": "why"}, ["a", "b", "c"], ["d", "a"]) == ["c", "d"]


def test_every_tool_is_listed():
    assert tracked_executables(), "no executable found: the finder is broken"
    assert "telemetry-gateway" in console_scripts()
    missing = unlisted(TOOLS, NOT_COMMANDS, tracked_executables(), console_scripts())
    assert not missing, f"add these to TOOLS in {Path(__file__).name} (or NOT_COMMANDS, with the reason): {missing}"
    gone = sorted(tool for tool in TOOLS if tool not in ENTRY_POINTS and not (ROOT / tool).is_file())
    assert not gone, f"listed in TOOLS but not in the repo: {gone}"


def snapshot() -> dict[str, tuple[int, int]]:
    """Every file and folder of the checkout outside UNWATCHED, with its mtime and size (untracked files only: a
    tracked source file may be edited meanwhile, and no tool writes one); .state and firmware/build by name only."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    sources = set(listed.split("\0"))
    seen = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in UNWATCHED and not (folder == str(ROOT / "firmware") and d == "build")]
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            relative = os.path.relpath(path, ROOT)
            changing = name in files and relative not in sources
            seen[relative] = (info.st_mtime_ns, info.st_size) if changing else (0, 0)
    for top in (".state", "firmware/build"):
        if (ROOT / top).is_dir():
            seen.update({f"{top}/{name}": (0, 0) for name in os.listdir(ROOT / top)})
    return seen


def command(tool: str, sub: str, flag: str) -> list[str]:
    return [*ENTRY_POINTS.get(tool, [str(ROOT / tool)]), *sub.split(), flag]


def run(argv: list[str], env: dict[str, str]) -> tuple[list[str], subprocess.CompletedProcess | str, float]:
    started = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIME_LIMIT_S * 3,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return argv, "timed out", time.monotonic() - started
    except OSError as error:  # not there, or not executable
        return argv, str(error), 0.0
    return argv, done, time.monotonic() - started


def verdict(argv: list[str], done: subprocess.CompletedProcess | str, seconds: float) -> str | None:
    """What is wrong with one run, or None."""
    shown = " ".join(Path(argv[0]).name if i == 0 else a for i, a in enumerate(argv))
    if isinstance(done, str):
        return f"{shown}: {done} after {seconds:.1f} s"
    if seconds >= TIME_LIMIT_S:
        return f"{shown}: took {seconds:.1f} s (exit {done.returncode})"
    tail = f"\n  stdout: {done.stdout[-300:]!r}\n  stderr: {done.stderr[-300:]!r}"
    if argv[-1] == "--help":
        if done.returncode != 0 or not re.search(r"usage", done.stdout, re.I):
            return f"{shown}: exit {done.returncode}, expected 0 and a usage line on stdout{tail}"
    elif done.returncode != 2 or done.stdout or not any(BOGUS in line for line in done.stderr.splitlines()):
        return f"{shown}: exit {done.returncode}, expected 2, nothing on stdout and a line naming {BOGUS}{tail}"
    return None


def test_verdict_finds_each_fault():
    def done(code: int, out: str = "", err: str = "") -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess([], code, out, err)
    assert verdict(["t", "--help"], done(0, "usage: t [-h]\n"), 0.1) is None
    assert verdict(["t", BOGUS], done(2, "", f"t: unknown option '{BOGUS}'\n"), 0.1) is None
    assert "exit 1" in verdict(["t", "--help"], done(1, "usage: t\n"), 0.1)
    assert "exit 0" in verdict(["t", "--help"], done(0, "t does things\n"), 0.1)
    assert "exit 1" in verdict(["t", BOGUS], done(1, "", f"t: unknown option '{BOGUS}'\n"), 0.1)
    assert "exit 2" in verdict(["t", BOGUS], done(2, "", "usage: t [-h]\n"), 0.1)
    assert "exit 2" in verdict(["t", BOGUS], done(2, "started\n", f"t: unknown option '{BOGUS}'\n"), 0.1)
    assert "took" in verdict(["t", "--help"], done(0, "usage: t\n"), TIME_LIMIT_S)
    assert "timed out" in verdict(["t", "--help"], "timed out", 3 * TIME_LIMIT_S)


def test_help_and_unknown_flag(tmp_path):
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    log = tmp_path / "started.log"
    for program in SLOW_PROGRAMS:
        (stand_ins / program).write_text(f'#!/bin/sh\necho "{program} $*" >> "{log}"\nexit 97\n')
        (stand_ins / program).chmod(0o755)
    # A tool that ran anyway would find no Spark and, for Cassandra, a closed port (never a live node's data).
    env = {**os.environ, "PATH": f"{stand_ins}:{os.environ['PATH']}", "SPARK_HOME": "/nonexistent/spark",
           "PYTHONDONTWRITEBYTECODE": "1", "TELEMETRY_CASSANDRA_HOSTS": "127.0.0.1", "TELEMETRY_CASSANDRA_PORT": "9"}
    env.pop("TELEMETRY_RESULTS_DIR", None)  # the benchmarks' real results folders are the ones watched
    runs = [command(tool, sub, flag) for tool, subs in TOOLS.items() for sub in ("", *subs)
            for flag in ("--help", BOGUS)]
    before = snapshot()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda argv: run(argv, env), runs))
    after = snapshot()
    problems = [problem for problem in (verdict(*result) for result in results) if problem]
    assert not problems, "\n".join(problems)
    assert not log.exists(), f"started by a --help or a refusal:\n{log.read_text()}"
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    assert not changed, f"files created or changed by a --help or a refusal: {changed}"


def test_the_analytics_archive_builds_on_a_checkout_without_a_venv(tmp_path):
    """make -C analytics dist needs only a Python 3 with zipfile, not the repo's .venv."""
    files = subprocess.run(["git", "ls-files", "-z", "analytics", "lib/telemetry_cassandra"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    subprocess.run(["cp", "--parents", "-P", "-t", str(tmp_path), *filter(None, files)], cwd=ROOT, check=True)
    env = {**os.environ, "PATH": "/usr/local/bin:/usr/bin:/bin"}
    made = subprocess.run(["make", "-s", "-C", str(tmp_path / "analytics"), "dist"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert made.returncode == 0, made.stdout + made.stderr
    assert not (tmp_path / ".venv").exists()
    assert sorted(p.name for p in (tmp_path / "analytics" / "dist").iterdir()) == [
        "daily.py", "export.py", "report.py", "telemetry_analytics.zip"]
