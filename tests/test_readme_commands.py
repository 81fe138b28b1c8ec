"""Every shell command a README shows is accounted for: run here, run by a named test, or manual with a reason;
and every relative link in a README leads to a file.

The commands are the lines of every fenced `sh`, `bash`, `shell` or `console` block of every README.md in the repo
(`git ls-files`; in `console` blocks the lines after a `$ ` prompt), with continuation lines joined and trailing
comments dropped. Each must have an entry in COMMANDS below, and each entry must match a command, so a command added
to a README without an entry fails here, and so does an entry left behind. A fence with no language fails too: a
command must not hide from this test in an unlabelled block (use `text` for diagrams and output).

Entries:
- Run(expect=...): run here, from the repo root, with a timeout; the exit status must be `status` and `expect` must
  be in its output. `cassandra=True` when it needs the local node (the session's fixture starts it); `sub`
  replaces paths in the command with ones under a temporary folder.
- RunBy("path::name"): the named test runs it (the file must exist and define that test).
- Manual("why"): not run by any test, with the reason.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHELL_FENCES = {"sh", "bash", "shell", "console"}


@dataclass(frozen=True)
class Run:
    expect: str
    status: int = 0
    cassandra: bool = False
    timeout: float = 120
    sub: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunBy:
    node_id: str


@dataclass(frozen=True)
class Manual:
    reason: str


DECODE_LINE = "'$T1,G,1234,temp_in=11.77,temp_out=10.43,humidity=46.0,light=57*0C4E'"
PI_INSTALL = "deploy/pi/tests/test_pi_install.py"
CLUSTER_GATEWAY = "deploy/cluster/tests/test_gateway_on_cluster.py::test_frames_survive_two_of_three_nodes_dying"
OPERATIONS = "deploy/cluster/tests/test_operations.py"
LAUNCHER = "deploy/local/tests/test_launcher.py"
AUTH = "deploy/local/tests/test_auth.py"
SCHEMA = "schema/tests/test_schema_in_cassandra.py"
DAILY = "analytics/tests/test_daily_job.py"
EXPORT = "analytics/tests/test_export_job.py"
CLUSTER_ANALYTICS = "deploy/cluster/tests/test_analytics_on_cluster.py::test_jobs_on_the_cluster_match_a_single_node"
RECIPE = ("spark-submit --master spark://10.0.0.20:7077 "
          "--packages com.datastax.spark:spark-cassandra-connector_2.12:3.5.1 --py-files telemetry_analytics.zip "
          "--conf spark.cassandra.connection.host=10.0.0.11,10.0.0.12,10.0.0.13")
RADIO = "firmware/tests/test_radio_gateway.py"
# The grower's commands in order: keys, upload, provision, radio-sim, install --migrate into a temporary root, check.
FIRST_HOUR = "deploy/pi/tests/test_first_hour.py::test_the_first_hour_as_the_readmes_tell_it"
BOARD_SIM = "firmware/board_sim/tests/test_board_simulation.py"
A_BOARD = "a real board on a USB port"
A_PI = "changes the machine it runs on (a Pi as root, systemd as PID 1); deploy/pi/tests install the same under --root"

# decode --port and its verdicts, both gateways on a pty (a keys file through --config there).
BENCH_DECODE = ("gateway/conformance/test_bench_decode.py::"
                "test_decode_port_gives_every_gateway_the_same_verdicts_and_writes_nothing")

COMMANDS: dict[str, Run | RunBy | Manual] = {
    # README.md
    "make demo": Manual("the whole pipeline for minutes, Cassandra and Spark included; run by hand, as a newcomer does"),
    "make test": Manual("every suite, this one included"),
    "sudo apt-get install -y openjdk-17-jdk-headless maven": Manual(
        "installs system packages; deploy/setup/debian-packages prints this line for what is missing"),
    # deploy/local/README.md
    "deploy/local/cassandra start": RunBy(f"{LAUNCHER}::test_start_of_a_running_node_says_so"),
    "deploy/local/cassandra status": Run(expect="", cassandra=True),
    'deploy/local/cassandra cqlsh -e "DESCRIBE KEYSPACES"': Run(expect="system_schema", cassandra=True),
    "deploy/local/cassandra nodetool status": Run(expect="UN  127.0.0.1", cassandra=True),
    "deploy/local/cassandra logs 100": Run(expect="INFO", cassandra=True),
    "deploy/local/cassandra stop": RunBy(f"{LAUNCHER}::test_stop_and_start_keep_the_data"),
    "deploy/local/cassandra kill": RunBy(f"{LAUNCHER}::test_kill_then_start_keeps_every_acknowledged_write"),
    "deploy/local/cassandra fetch": Run(expect="", cassandra=True),
    "deploy/local/commitlog-power-cut --rounds 3": Manual(
        "a benchmark: minutes of node restarts on 127.0.0.5; its runs go to deploy/local/results"),
    # deploy/cluster/README.md
    "deploy/cluster/up": RunBy(CLUSTER_GATEWAY),
    "deploy/cluster/status": RunBy(CLUSTER_GATEWAY),
    "deploy/cluster/node 3 kill": RunBy(CLUSTER_GATEWAY),
    "deploy/cluster/repair": RunBy(f"{OPERATIONS}::test_repair_after_a_node_missed_writes_and_their_hints"),
    "deploy/cluster/replace 3": RunBy(f"{OPERATIONS}::test_replace_a_dead_node"),
    "deploy/cluster/down": RunBy(CLUSTER_GATEWAY),
    "deploy/cluster/bench": Manual("a benchmark: minutes on a running 3-node cluster; its runs go to deploy/cluster/results"),
    # deploy/tls/README.md
    "CASSANDRA_AUTH=1 deploy/local/cassandra start": RunBy(
        f"{AUTH}::test_admin_credentials_are_private_and_the_default_superuser_cannot_log_in"),
    'install -m 0600 /dev/null role-passwords.toml && "${EDITOR:-vi}" role-passwords.toml': Manual(
        "opens an editor for a secret"),
    "TELEMETRY_CASSANDRA_CREDENTIALS_FILE=.state/cassandra/admin.toml schema/migrate --role-passwords "
    "role-passwords.toml": RunBy(f"{AUTH}::test_running_migrate_again_with_new_passwords_rotates_them"),
    "deploy/tls/make-test-certs /tmp/pki": Run(expect="ca.crt", sub={"/tmp/pki": "pki"}),
    # deploy/pi/README.md
    "sudo apt-get install -y git python3-venv": Manual(A_PI),
    "cd telemetry": Manual("the folder of a clone of this repository on a Pi"),
    "sudo deploy/pi/install": RunBy(FIRST_HOUR),  # with --root and --migrate
    "sudoedit /etc/telemetry-gateway/config.toml": Manual("opens an editor on the Pi"),
    "sudoedit /etc/telemetry-gateway/credentials.toml": Manual("opens an editor for a secret on the Pi"),
    # The install's --migrate runs this command, from the temporary root, against the local node.
    "sudo TELEMETRY_CASSANDRA_CREDENTIALS_FILE=/etc/telemetry-gateway/credentials.toml telemetry-schema-migrate "
    "--config /etc/telemetry-gateway/config.toml": RunBy(
        "deploy/pi/tests/test_pi_schema.py::test_install_migrate_applies_the_schema_and_check_passes"),
    "sudo TELEMETRY_CASSANDRA_CREDENTIALS_FILE=/etc/telemetry-gateway/credentials.toml "
    "/opt/telemetry-gateway/venv/bin/telemetry-gateway check --config /etc/telemetry-gateway/config.toml": RunBy(
        FIRST_HOUR),  # from the temporary root
    "sudo systemctl restart telemetry-gateway && journalctl -u telemetry-gateway -f": Manual(A_PI),
    "deploy/pi/install --root /tmp/pi-root": RunBy(f"{PI_INSTALL}::test_the_user_config_state_and_modes"),
    "deploy/pi/uninstall --root /tmp/pi-root --purge": RunBy(f"{PI_INSTALL}::test_uninstall_keeps_the_data_unless_purge"),
    # schema/README.md
    "schema/migrate --help": Run(expect="usage: schema/migrate"),
    "schema/migrate": RunBy(f"{SCHEMA}::test_second_run_changes_nothing"),
    "schema/migrate --status": RunBy(f"{SCHEMA}::test_second_run_changes_nothing"),
    "schema/migrate --dc dc1:3 --dc dc2:3": RunBy(f"{SCHEMA}::test_network_topology_replication_and_ttl"),
    "schema/migrate --readings-ttl 31536000": RunBy(f"{SCHEMA}::test_network_topology_replication_and_ttl"),
    # gateway/python/README.md
    ".venv/bin/telemetry-gateway --help": Run(expect="Serial telemetry frames into Cassandra"),
    ".venv/bin/telemetry-gateway --version": Run(expect="(python)"),
    ".venv/bin/telemetry-gateway run --config gateway.toml": RunBy(
        "gateway/conformance/test_conformance.py::test_frames_through_a_pty_land_as_the_right_rows"),
    ".venv/bin/telemetry-gateway run --input frames.txt --exit-when-drained": RunBy(
        "gateway/python/tests/test_tls.py::test_run_over_mutual_tls_lands_the_rows"),
    ".venv/bin/telemetry-gateway check --config gateway.toml": RunBy(
        "gateway/conformance/test_process_contract.py::test_check_fails_clearly_without_cassandra"),
    f"echo {DECODE_LINE} | .venv/bin/telemetry-gateway decode": Run(expect='"kind":"frame"'),
    ".venv/bin/telemetry-gateway decode --port /dev/ttyUSB0 --keys keys.txt": RunBy(BENCH_DECODE),  # on a pty
    # gateway/node/README.md
    "gateway/node/bin/telemetry-gateway-node --help": Run(expect="Serial telemetry frames into Cassandra"),
    "gateway/node/bin/telemetry-gateway-node --version": Run(expect="(node)"),
    "gateway/node/bin/telemetry-gateway-node run --config gateway.toml": RunBy(
        "gateway/conformance/test_conformance.py::test_frames_through_a_pty_land_as_the_right_rows"),
    "gateway/node/bin/telemetry-gateway-node run --input frames.txt --exit-when-drained": RunBy(
        "gateway/python/tests/test_tls.py::test_run_over_mutual_tls_lands_the_rows"),
    "gateway/node/bin/telemetry-gateway-node check --config gateway.toml": RunBy(
        "gateway/conformance/test_process_contract.py::test_check_fails_clearly_without_cassandra"),
    f"echo {DECODE_LINE} | gateway/node/bin/telemetry-gateway-node decode": Run(expect='"kind":"frame"'),
    "gateway/node/bin/telemetry-gateway-node decode --port /dev/ttyUSB0 --keys keys.txt": RunBy(BENCH_DECODE),
    "node --test gateway/node/test/": Manual("the Node gateway's whole suite; make test runs it"),
    # gateway/benchmark/README.md
    "gateway/bench --help": Run(expect="usage: gateway/bench"),
    "gateway/bench --latte-seconds 0 --repeat 2": Manual("a benchmark: tens of minutes; its runs go to results/"),
    "gateway/bench --variant TELEMETRY_CASSANDRA_BATCH_ROWS=500 --repeat 5": Manual(
        "a benchmark: tens of minutes; its runs go to results/"),
    # gateway/conformance/README.md
    ".venv/bin/python -m pytest gateway/conformance/test_conformance.py": RunBy(
        "gateway/conformance/test_conformance.py::test_frames_through_a_pty_land_as_the_right_rows"),
    "CONFORMANCE_GATEWAYS=node .venv/bin/python -m pytest gateway/conformance/test_conformance.py": RunBy(
        "gateway/conformance/test_conformance.py::test_frames_through_a_pty_land_as_the_right_rows"),
    'GATEWAY_COMMAND="/path/to/my-gateway" .venv/bin/python -m pytest gateway/conformance': Manual(
        "a placeholder for a third implementation's command"),
    # analytics/README.md
    "analytics/submit daily": RunBy(f"{DAILY}::test_first_since_last_takes_every_day_then_late_data_only_its_days"),
    "analytics/submit daily --day 2026-03-29 --tz Europe/Zagreb": RunBy(
        f"{DAILY}::test_autumn_day_has_25_hours_and_a_rerun_gives_the_same_rows"),
    "analytics/submit daily --from 2026-03-01 --to 2026-03-31": RunBy(
        f"{DAILY}::test_explicit_days_dst_and_utc_midnight_and_partition_pruning"),
    "analytics/submit daily --all": RunBy(
        "analytics/tests/test_daily_paths.py::test_all_scans_readings_once_and_aggregates_every_day_present"),
    "analytics/submit report --month 2026-03 --out reports/2026-03": RunBy(
        "analytics/tests/test_report_job.py::test_report_figures_equal_the_independent_computation"),
    "analytics/submit report --from 2026-03-10 --to 2026-03-16 --config my-report.toml": Manual(
        "the report's --from/--to and --config are the same options as --month's; the tests use --month"),
    "analytics/submit export --from 2026-03-01 --to 2026-03-31 --tz Europe/Zagreb --format csv --out "
    "exports/2026-03.csv": RunBy(f"{EXPORT}::test_csv_is_every_reading_of_the_local_days_in_order_exactly"),
    "make -C analytics dist": RunBy(
        "analytics/tests/test_submit_anywhere.py::test_the_dist_archive_carries_everything_the_jobs_import"),
    f"{RECIPE} daily.py --keyspace telemetry --tz Europe/Berlin --from 2026-05-03 --to 2026-05-05": RunBy(
        CLUSTER_ANALYTICS),
    f"{RECIPE} report.py --keyspace telemetry --tz Europe/Berlin --from 2026-05-03 --to 2026-05-05 --out "
    "report-2026-05": RunBy(CLUSTER_ANALYTICS),
    "export SPARK_HOME=$(.venv/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')": Run(
        expect=""),
    "PYSPARK_PYTHON=.venv/bin/python PYSPARK_DRIVER_PYTHON=.venv/bin/python SPARK_LOCAL_IP=127.0.0.1 "
    "\"$SPARK_HOME/bin/spark-submit\" --master 'local[*]' --packages "
    "com.datastax.spark:spark-cassandra-connector_2.12:3.5.1 --conf spark.jars.ivy=$PWD/.state/spark-ivy "
    "analytics/daily.py --hosts 127.0.0.1 --day 2026-03-29": Manual(
        "what analytics/submit runs, shown for reference; the analytics tests run the jobs through analytics/submit"),
    # firmware/README.md
    "make -C firmware setup": Manual("installs Debian packages and RF24; make setup runs it"),
    "make -C firmware": Manual("builds every sketch; make test builds them (make -C firmware test)"),
    "make -C firmware test": Manual("the firmware's suite, minutes; make test runs it"),
    # On a simulated board's pty, RESET_CMD and AVRDUDE stand-ins: the simulator already runs the ELF it built.
    "make -C firmware/sensor_node upload PORT=/dev/ttyUSB0 NODE_ID=3": RunBy(FIRST_HOUR),
    "firmware/scripts/provision /dev/ttyUSB0 3 --keys keys.txt --no-flash": RunBy(
        "firmware/tests/test_provision.py::test_a_board_gets_its_key_over_the_cable_and_keeps_its_counter_rising"),
    "firmware/scripts/provision /dev/ttyUSB0 3 --keys keys.txt": Manual(A_BOARD),
    "make -C firmware/base_station monitor PORT=/dev/ttyUSB0": Manual(A_BOARD),
    "arduino-cli core install arduino:avr": Manual("arduino-cli and the internet, neither used here"),
    'arduino-cli lib install "RF24@1.5.0"': Manual("arduino-cli and the internet, neither used here"),
    'arduino-cli compile --fqbn arduino:avr:uno --library firmware --build-property "build.extra_flags=-DNODE_ID=3" '
    "firmware/sensor_node": Manual("arduino-cli and the internet, neither used here"),
    "arduino-cli upload --fqbn arduino:avr:uno -p /dev/ttyUSB0 firmware/sensor_node": Manual(A_BOARD),
    "make -C firmware serial_node sim-runner": Manual("builds firmware; make -C firmware test builds the same"),
    "firmware/build/tests/sim_uno -p /tmp/ttyUSB-sim -r -a 0=2500 -a 1=3000 "
    "firmware/build/serial_node/serial_node.elf": Manual("a simulated board on a pty, until stopped, for gateway work"),
    "firmware/scripts/radio-sim --nodes 3 --sample-s 2 --seconds 30": Manual(
        "minutes of simulation; the firmware suite checks the command's output and summary (radio_scenarios_test.cpp)"),
    "firmware/scripts/radio-sim --nodes 6 --seconds 600 --loss 0.1 --trace t.jsonl": Manual(
        "minutes of simulation; the firmware suite checks the command's output and summary (radio_scenarios_test.cpp)"),
    "firmware/scripts/radio-sim --nodes 2 --sample-s 5 --seconds 3600 -r --pty-link /tmp/ttyUSB-radio &": RunBy(
        f"{RADIO}::test_two_nodes_over_the_air_into_cassandra"),
    ".venv/bin/telemetry-gateway run --port /tmp/ttyUSB-radio --hosts 127.0.0.1": RunBy(
        f"{RADIO}::test_two_nodes_over_the_air_into_cassandra"),
    "firmware/scripts/radio-sim-bench 30": Manual("a benchmark of the simulator, minutes"),
    "firmware/scripts/make-keys 6 keys.txt": Run(expect="make-keys: 6 keys in", sub={"keys.txt": "keys.txt"}),
    "make -C firmware/sensor_node key-eep NODE_ID=3 SIGNING=1 KEY_FILE=keys.txt": Manual(
        "needs a keys file; the firmware suite's signing_sim_test.cpp (KeyImage) runs scripts/node-key-eeprom, "
        "which this target runs"),
    "make -C firmware/sensor_node ispload NODE_ID=3 SIGNING=1 KEY_FILE=keys.txt ISP_PROG=usbasp": Manual(
        "a real board on an ISP programmer"),
    "make -C firmware/sensor_node upload PORT=/dev/ttyUSB0 NODE_ID=3 SIGNING=1 KEY_FILE=keys.txt "
    "BOOTLOADER_EEPROM=yes": Manual(A_BOARD),
    "firmware/scripts/signing-time": Manual(
        "a benchmark (builds two sketches, runs the simulator); the firmware suite's signing_sim measures the same"),
    "firmware/scripts/radio-sim --nodes 6 --sample-s 5 --seconds 300 --keys keys.txt --attack forge,replay "
    "--reboot-node 3:100 --reboot-base 200": Manual(
        "minutes of simulation; firmware/tests/test_signed_radio.py runs it with 2 nodes into each gateway"),
    # firmware/board_sim/README.md
    ".venv/bin/telemetry-board-sim --pty /tmp/ttyUSB-sim --sources 3 --rate 5": RunBy(
        f"{BOARD_SIM}::test_pty_mode_is_a_serial_port"),
    ".venv/bin/telemetry-board-sim --output week.txt --sources 3 --days 7 --interval 60": Run(
        expect="", sub={"week.txt": "week.txt"}),
    ".venv/bin/telemetry-board-sim --pty /tmp/ttyACM-room --format csv": RunBy(f"{BOARD_SIM}::test_pty_mode_is_a_serial_port"),
    # deploy/monitoring/README.md
    "sudo cp -r deploy/monitoring/rules /etc/prometheus/telemetry-rules": Manual(
        "installs the rules on a Prometheus machine (root)"),
    "sudoedit /etc/prometheus/prometheus.yml": Manual("opens an editor on the Prometheus machine"),
    "promtool check config /etc/prometheus/prometheus.yml && sudo systemctl reload prometheus": Manual(
        "reloads a running Prometheus server (root)"),
    "sudo systemctl disable --now prometheus": Manual("stops a Prometheus server the package started (root)"),
    "cd deploy/monitoring && promtool check rules rules/telemetry.rules.yml && promtool test rules "
    "tests/telemetry.rules.test.yml": RunBy("deploy/monitoring/tests/test_monitoring_rules.py::test_promtool_accepts"),
}


def readmes() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*README.md"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted({ROOT / name for name in listed.split("\0") if name and (ROOT / name).exists()})


def fenced_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(info string, lines) of each fenced block; a fence may be indented (inside a list)."""
    blocks, current, info, fence = [], None, "", ""
    for line in text.splitlines():
        stripped = line.strip()
        if current is None:
            opening = re.match(r"(`{3,}|~{3,})\s*(\S*)", stripped)
            if opening:
                fence, info, current = opening.group(1), opening.group(2), []
        elif stripped.startswith(fence) and stripped.strip(fence[0]) == "":
            blocks.append((info, current))
            current = None
        else:
            current.append(stripped)
    return blocks


def without_comment(line: str) -> str:
    """The line up to an unquoted `#` that starts a word."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def commands_of(info: str, lines: list[str]) -> list[str]:
    commands, pending = [], ""
    for line in lines:
        if info == "console" and not pending:
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        line = without_comment(line)
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        command = " ".join((pending + line).split())
        pending = ""
        if command:
            commands.append(command)
    return commands


def shown_commands() -> dict[str, list[str]]:
    """Every command, with the READMEs that show it."""
    shown: dict[str, list[str]] = {}
    for readme in readmes():
        for info, lines in fenced_blocks(readme.read_text()):
            if info in SHELL_FENCES:
                for command in commands_of(info, lines):
                    shown.setdefault(command, []).append(str(readme.relative_to(ROOT)))
    return shown


def test_the_parser_joins_continuations_and_drops_comments_and_output():
    block = ["$ make demo   # the demo", "Demo done.", "$ a 'x # y' \\", "  --flag # b", "# only a comment", ""]
    assert commands_of("console", block) == ["make demo", "a 'x # y' --flag"]
    assert commands_of("sh", ["echo '#1' # note", "x=1#2"]) == ["echo '#1'", "x=1#2"]


def test_every_fence_in_a_readme_names_its_language():
    unlabelled = [str(readme.relative_to(ROOT)) for readme in readmes()
                  for info, _ in fenced_blocks(readme.read_text()) if not info]
    assert not unlabelled, f"fenced blocks without a language (sh, console, text, ...) in: {sorted(set(unlabelled))}"


def test_every_command_shown_has_an_entry_and_every_entry_a_command():
    shown = shown_commands()
    missing = {command: where for command, where in shown.items() if command not in COMMANDS}
    assert not missing, ("commands in READMEs without an entry in tests/test_readme_commands.py COMMANDS "
                         f"(Run, RunBy or Manual): {missing}")
    stale = sorted(set(COMMANDS) - set(shown))
    assert not stale, f"entries for commands no README shows any more: {stale}"


def test_every_relative_link_in_a_readme_exists():
    broken = []
    for readme in readmes():
        for target in re.findall(r"\]\(([^)\s]+)\)", readme.read_text()):
            path = target.split("#")[0]
            if path and not re.match(r"[a-z]+:", path) and not (readme.parent / path).exists():
                broken.append(f"{readme.relative_to(ROOT)}: {target}")
    assert not broken, f"links to files that do not exist: {broken}"


REPO_TOPS = ("analytics/", "deploy/", "firmware/", "gateway/", "lib/", "schema/", "tests/")


def test_every_repo_path_a_readme_names_exists():
    """Paths in `code` that start at a top folder of the repo; placeholders, and the results folders the benchmarks
    fill, are left out."""
    missing = []
    for readme in readmes():
        for span in re.findall(r"`([^`\n]+)`", readme.read_text()):
            for word in span.split():
                path = word.rstrip(",.;:)").split("::")[0]
                if (path.startswith(REPO_TOPS) and not re.search(r"[<>*{}…\[\]$]|\.\.\.|YYYY|/results/", path)
                        and not (ROOT / path).exists() and not (readme.parent / path).exists()):
                    missing.append(f"{readme.relative_to(ROOT)}: {path}")
    assert not missing, f"paths that do not exist: {missing}"


def test_each_named_test_exists():
    for command, entry in COMMANDS.items():
        if isinstance(entry, RunBy):
            path, _, name = entry.node_id.partition("::")
            source = ROOT / path
            assert source.is_file(), f"{command!r}: {path} does not exist"
            assert re.search(rf"^\s*def {re.escape(name)}\(", source.read_text(), re.M), (
                f"{command!r}: {path} defines no test {name}")


def test_each_manual_command_says_why():
    for command, entry in COMMANDS.items():
        if isinstance(entry, Manual):
            assert len(entry.reason) > 10, command


RUN = [pytest.param(command, entry, id=command[:60], marks=[pytest.mark.cassandra] if entry.cassandra else [])
       for command, entry in COMMANDS.items() if isinstance(entry, Run)]


@pytest.mark.parametrize("command, entry", RUN)
def test_command_runs(command, entry, request, tmp_path):
    if entry.cassandra:
        request.getfixturevalue("cassandra_node")
    for shown, replacement in entry.sub.items():
        command = command.replace(shown, str(tmp_path / replacement))
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=entry.timeout,
                          env={**os.environ, "TELEMETRY_RESULTS_DIR": str(tmp_path / "results")})
    output = done.stdout + done.stderr
    assert done.returncode == entry.status, f"{command}: exit {done.returncode}\n{output[-3000:]}"
    assert entry.expect in output, f"{command}: no {entry.expect!r} in\n{output[-3000:]}"
