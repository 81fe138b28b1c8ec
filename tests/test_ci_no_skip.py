"""CI runs as CI: .ci/run sets CI=true, and under it a skipped test fails the run, in pytest (the root conftest.py)
and in node:test (the Node gateway's ci-reporter.js). Each guard is run here on a throwaway suite with a skip, once
with CI=true (the run fails, naming the skip) and once without (the same suite passes, the skip reported as such),
so a guard that stopped working, or a .ci/run that stopped setting CI, fails this test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI_REPORTER = ROOT / "gateway" / "node" / "test-support" / "ci-reporter.js"

PYTEST_SUITE = '''
import pytest

def test_runs():
    assert True

@pytest.mark.skipif(True, reason="probe skipif")
def test_marked():
    pass

def test_skips_inside():
    pytest.skip("probe skip")
'''

NODE_SUITE = '''
import test from 'node:test';
test('runs', () => {});
test('skipped', { skip: 'probe skip' }, () => {});
test('todo', { todo: 'probe todo' }, () => {});
'''


def environment(ci: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return env


def run_pytest(folder: Path, ci: str | None) -> subprocess.CompletedProcess:
    """The root conftest.py loaded as a plugin (-p conftest from the repo root on PYTHONPATH) on a suite outside
    the repo, with no ini file of ours (its testpaths and addopts would pull the whole repo in)."""
    env = environment(ci) | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-c", os.devnull, "--rootdir",
                           str(folder), "-q", "-rs", str(folder)], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("ci", ["true", "1"])
def test_pytest_skip_fails_the_run_under_ci(tmp_path, ci):
    (tmp_path / "test_probe.py").write_text(PYTEST_SUITE)
    run = run_pytest(tmp_path, ci)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    summary = out.strip().splitlines()[-1]
    assert "1 passed" in summary and "skipped" not in summary, out  # a skipif fails the set-up: an error
    assert out.count(f"CI={ci} allows no skips") >= 2, out
    assert "probe skipif" in out and "probe skip" in out, out


def test_pytest_skip_is_a_skip_without_ci(tmp_path):
    (tmp_path / "test_probe.py").write_text(PYTEST_SUITE)
    run = run_pytest(tmp_path, None)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "1 passed, 2 skipped" in out, out


def run_node(folder: Path, ci: str | None) -> subprocess.CompletedProcess:
    return subprocess.run(["node", "--test", f"--test-reporter={CI_REPORTER}", str(folder / "probe.test.mjs")],
                          cwd=folder, env=environment(ci), capture_output=True, text=True, timeout=120)


def test_node_skip_and_todo_fail_the_run_under_ci(tmp_path):
    (tmp_path / "probe.test.mjs").write_text(NODE_SUITE)
    run = run_node(tmp_path, "true")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "2 test(s) skipped or todo, which fails the run" in out, out
    assert "skip: probe skip" in out and "todo: probe todo" in out, out


def test_node_skip_is_a_skip_without_ci(tmp_path):
    (tmp_path / "probe.test.mjs").write_text(NODE_SUITE)
    run = run_node(tmp_path, None)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "which fails the run" not in out, out


def test_ci_run_sets_ci():
    """.ci/run exports CI=true before make test: CI's own environment is not relied on."""
    script = (ROOT / ".ci" / "run").read_text()
    lines = [line.strip() for line in script.splitlines()]
    assert "export CI=true" in lines, script
    assert lines.index("export CI=true") < lines.index("exec make test"), script
