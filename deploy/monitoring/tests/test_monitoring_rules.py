"""deploy/monitoring: the alert rules pass `promtool check rules`, the example config `promtool check config`, and
the rules' unit tests (telemetry.rules.test.yml) `promtool test rules`; every alert has a test that makes it fire,
and every gateway metric the rules read is one of gateway/contract/metrics.json."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
MONITORING = HERE.parent
RULES = MONITORING / "rules" / "telemetry.rules.yml"
RULE_TESTS = HERE / "telemetry.rules.test.yml"
METRICS = MONITORING.parents[1] / "gateway" / "contract" / "metrics.json"


def promtool(*args: str) -> subprocess.CompletedProcess:
    assert shutil.which("promtool"), "promtool is missing: install Debian's prometheus package (make setup does)"
    return subprocess.run(["promtool", *args], cwd=MONITORING, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args", [("check", "rules", "rules/telemetry.rules.yml"),
                                  ("check", "config", "prometheus.yml"),
                                  ("test", "rules", "tests/telemetry.rules.test.yml")],
                         ids=["check rules", "check config", "test rules"])
def test_promtool_accepts(args):
    result = promtool(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout + result.stderr


def test_every_alert_has_a_test_that_fires_it():
    alerts = re.findall(r"^\s+- alert: (\w+)$", RULES.read_text(), re.M)
    assert len(alerts) == 6
    tests = RULE_TESTS.read_text()
    for alert in alerts:
        assert re.search(rf"alertname: {alert}\n\s+exp_alerts:\n\s+- exp_labels", tests), alert
        assert re.search(rf"alertname: {alert}\n\s+exp_alerts: \[\]", tests), f"{alert}: no case where it holds off"


def test_the_rules_read_metrics_of_the_contract():
    families = {family["name"] for family in json.loads(METRICS.read_text())["metrics"]}
    used = set(re.findall(r"\btelemetry_gateway_[a-z_]+", RULES.read_text()))
    assert used and used <= families, used - families


def test_the_rules_select_the_example_scrape_job():
    job = re.search(r"job_name: (\S+)", (MONITORING / "prometheus.yml").read_text())[1]
    assert set(re.findall(r'job="([^"]+)"', RULES.read_text())) == {job}
