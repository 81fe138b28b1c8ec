"""deploy/notify/telemetry-alert-webhook run as a gateway runs it (the ALERT_* environment, alerts.md) against a real
local HTTP server (the conformance kit's web_hook) that answers as each test scripts it: what it POSTs, which
answers it retries, its timeout, its exit status and its one stderr line, and that a token never shows."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from telemetry_conformance.web_hook import Hook

NOTIFIER = Path(__file__).resolve().parents[1] / "telemetry-alert-webhook"
FROST = {"ALERT_RULE": "frost", "ALERT_SOURCE": "greenhouse_1", "ALERT_STATE": "firing", "ALERT_KIND": "below",
         "ALERT_METRIC": "temp_in", "ALERT_VALUE": "-0.5", "ALERT_THRESHOLD": "2", "ALERT_AT": "1795834800000",
         "ALERT_TIME": "2026-11-28T03:00:00.000Z"}
SILENT_OVER = {**FROST, "ALERT_RULE": "board_silent", "ALERT_STATE": "ok", "ALERT_KIND": "silence",
               "ALERT_METRIC": "", "ALERT_VALUE": "1260", "ALERT_THRESHOLD": "900"}


def load_notifier():
    loader = importlib.machinery.SourceFileLoader("telemetry_alert_webhook", str(NOTIFIER))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


@pytest.fixture
def hook():
    server = Hook("/alerts/greenhouse")
    yield server
    server.close()


def notify(*args, env: dict = FROST) -> subprocess.CompletedProcess:
    # The gateway's allow-list (alerts.md): PATH and the ALERT_* variables, nothing else.
    return subprocess.run([sys.executable, str(NOTIFIER), *map(str, args)], capture_output=True, text=True,
                          timeout=30, env={"PATH": "/usr/bin:/bin", **env})


def test_json_posts_every_field_of_the_alert_once(hook):
    result = notify(hook.url)
    assert (result.returncode, result.stderr) == (0, "")
    [request] = hook.requests
    assert request.path == "/alerts/greenhouse"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.body) == {
        "rule": "frost", "source": "greenhouse_1", "state": "firing", "kind": "below", "metric": "temp_in",
        "value": -0.5, "threshold": 2, "at": 1795834800000, "time": "2026-11-28T03:00:00.000Z",
        "message": "frost: greenhouse_1 temp_in -0.5, below 2, 2026-11-28T03:00:00.000Z"}


@pytest.mark.parametrize("status", [500, 429])
def test_a_server_error_is_retried_after_a_backoff(hook, status):
    hook.answers = [(status, {})]
    started = time.monotonic()
    result = notify(hook.url)
    assert (result.returncode, result.stderr) == (0, "")
    assert len(hook.requests) == 2 and hook.requests[0].body == hook.requests[1].body
    assert time.monotonic() - started >= 0.5


def test_a_client_error_is_not_retried(hook):
    hook.answers = [(404, {})]
    result = notify(hook.url)
    assert result.returncode == 1 and len(hook.requests) == 1
    assert result.stderr == (f"telemetry-alert-webhook: frost firing for greenhouse_1 not delivered to "
                             f"{hook.url.rsplit('/alerts', 1)[0]}: HTTP 404 Not Found (not retried)\n")


def test_a_redirect_is_not_followed(hook):
    hook.answers = [(302, {"Location": "/elsewhere"})]
    result = notify(hook.url)
    assert result.returncode == 1 and len(hook.requests) == 1
    assert "HTTP 302, a redirect (not followed)" in result.stderr


def test_a_silent_server_times_out_each_try(hook):
    hook.answers = [(None, {}), (None, {})]
    started = time.monotonic()
    result = notify("--timeout", "0.3", "--retries", "1", hook.url)
    took = time.monotonic() - started
    assert result.returncode == 1 and len(hook.requests) == 2
    assert result.stderr.endswith(": timed out (2 tries)\n") and result.stderr.count("\n") == 1
    assert 1.0 <= took < 5  # two tries of 0.3 s and a 0.5 s wait, plus python's start


def test_retries_stop_at_max_time(hook):
    hook.answers = [(500, {})] * 10
    result = notify("--retries", "9", "--max-time", "1", hook.url)
    assert result.returncode == 1 and len(hook.requests) == 2  # 0.5 s then 1 s would pass the budget
    assert result.stderr.endswith(": HTTP 500 Internal Server Error (2 tries)\n")


def test_no_server_is_a_connection_error():
    result = notify("--retries", "1", "http://127.0.0.1:1/hook")
    assert result.returncode == 1
    assert result.stderr.endswith("Connection refused (2 tries)\n"), result.stderr


def test_text_is_an_ntfy_style_push(hook):
    assert notify("--format", "text", hook.url).returncode == 0
    assert notify("--format", "text", "--header", "Priority: urgent", hook.url, env=SILENT_OVER).returncode == 0
    firing, cleared = hook.requests
    assert firing.body.decode() == "frost: greenhouse_1 temp_in -0.5, below 2, 2026-11-28T03:00:00.000Z"
    assert {k: firing.headers[k] for k in ("Content-Type", "Title", "Priority", "Tags")} == {
        "Content-Type": "text/plain; charset=utf-8", "Title": "frost on greenhouse_1", "Priority": "high",
        "Tags": "warning"}
    assert cleared.body.decode() == ("board_silent cleared: greenhouse_1 heard again after 1260 s of silence, "
                                     "2026-11-28T03:00:00.000Z")
    assert {k: cleared.headers[k] for k in ("Title", "Priority", "Tags")} == {
        "Title": "board_silent cleared on greenhouse_1", "Priority": "urgent", "Tags": "white_check_mark"}


def test_a_token_comes_from_a_file_and_never_shows(hook, tmp_path):
    token, headers = tmp_path / "token", tmp_path / "headers"
    token.write_text("tk_s3cret\n")
    headers.write_text("# for the hook\nX-Api-Key: k3y\n")
    hook.answers = [(401, {})]
    result = notify("--token-file", token, "--header-file", headers, hook.url)
    assert result.returncode == 1 and "s3cret" not in result.stderr and "k3y" not in result.stderr
    assert result.stderr.endswith("HTTP 401 Unauthorized (not retried)\n")
    assert hook.requests[0].headers["Authorization"] == "Bearer tk_s3cret"
    assert hook.requests[0].headers["X-Api-Key"] == "k3y"
    headers.write_text("Authorization Bearer s3cret\n")
    result = notify("--header-file", headers, hook.url)
    assert (result.returncode, result.stderr) == (2, f"telemetry-alert-webhook: {headers} line 1: not a "
                                                     f"'Name: value' header\n")
    assert notify("--token-file", tmp_path / "absent", hook.url).stderr.endswith(
        "absent: No such file or directory\n")
    assert len(hook.requests) == 1


def test_usage():
    result = notify("--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: telemetry-alert-webhook")
    for args, line in [
            (["--bogus", "http://h/"], "unrecognized arguments: --bogus (see --help)"),
            (["--format", "xml", "http://h/"], "argument --format: invalid choice: 'xml' (choose from 'json', "
                                               "'text') (see --help)"),
            (["https://me:pw@h/"], "URL holds a user or password: put credentials in a --header-file instead"),
            (["ftp://h/"], "URL must be http:// or https:// with a host, not 'ftp://h/'")]:
        result = notify(*args)
        assert (result.returncode, result.stderr) == (2, f"telemetry-alert-webhook: {line}\n"), args
    result = notify("http://h/", env={})
    assert result.returncode == 2 and "ALERT_RULE, ALERT_SOURCE" in result.stderr and result.stderr.count("\n") == 1


def test_test_sends_a_made_up_alert(hook):
    assert notify("--test", hook.url, env={}).returncode == 0
    sent = json.loads(hook.requests[0].body)
    assert (sent["rule"], sent["state"], sent["value"]) == ("test", "firing", 1.5)
    assert abs(sent["at"] - time.time() * 1000) < 10_000


def test_numbers_stay_exact_and_messages_read_well():
    notifier = load_notifier()
    assert [notifier.number(text) for text in ("57", "21.5", "1e+21", "5e-324", "NaN", "x")] == [
        57, 21.5, 1e21, 5e-324, "NaN", "x"]
    assert math.copysign(1, notifier.number("-0.0")) == -1
    alert = notifier.alert_from({**FROST, "ALERT_RULE": "heat", "ALERT_KIND": "above", "ALERT_VALUE": "36.5",
                                 "ALERT_THRESHOLD": "35"})
    assert notifier.message(alert) == "heat: greenhouse_1 temp_in 36.5, above 35, 2026-11-28T03:00:00.000Z"
    assert notifier.message({**alert, "state": "ok", "value": 35}) == (
        "heat cleared: greenhouse_1 temp_in 35 (clears at 35), 2026-11-28T03:00:00.000Z")
    silent = notifier.alert_from({**SILENT_OVER, "ALERT_STATE": "firing", "ALERT_VALUE": "901"})
    assert silent["metric"] is None
    assert notifier.message(silent) == ("board_silent: nothing from greenhouse_1 for 901 s (limit 900 s), "
                                        "2026-11-28T03:00:00.000Z")
    assert notifier.wait_before(0, None, 9) == 0.5 and notifier.wait_before(2, "5", 9) == 5
    assert notifier.wait_before(3, None, 1.5) == 1.5
