"""A grower's first hour, as the READMEs tell it, command by command, with the hardware simulated and nothing else:
make the keys (firmware README), build and "upload" the sensor sketch, give the board its key over its USB cable
with scripts/provision (the real compiled sketch on simavr, its UART on a pty that resets it when opened, as an
Uno's USB port does), put it in the greenhouse (radio-sim: that board's EEPROM, a base station, the air, a
frost-cold A0), install the gateway (deploy/pi/install --migrate into a temporary root, applying the schema to the
local node in a fresh keyspace; it runs while the board is provisioned, as in a second terminal), edit the installed
config as the install's closing "left:" lines say (the port, the frost rule with the installed
telemetry-alert-webhook, the status page opened to the farm's network) and hand the keys to the unit with the
drop-in of deploy/pi/README.md, run the README's `check`, start the unit as systemd would (unit_sandbox.py). Then:
every frame the base station printed is a row in Cassandra with exactly its values, the board is on the status page,
and the frost alert reached a local web hook as the push the README's rule sends.

What is not the README's: paths under the temporary root (the spool and the keyspace through the unit's environment
file), RESET_CMD=true AVRDUDE=true for the upload (the simulated board already runs the ELF the build made), a frost
rule's for_s of 2 s of readings instead of 600 (the night is seconds long), and a sample every 2 s
(SAMPLE_SECONDS=2)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
import time
import urllib.request
from datetime import timezone
from pathlib import Path

import pytest

from telemetry_conformance import free_port, utc_days_around_now, wait_for
from telemetry_conformance.local_node import connect
from telemetry_conformance.web_hook import web_hook  # noqa: F401 (fixture)
from pi_units import ROOT
from test_pi_install import INSTALL, account, needs_root, run, seeded_root, work  # noqa: F401 (work: a fixture)
from unit_sandbox import start_unit

sys.path.insert(0, str(ROOT / "firmware" / "tests"))  # the simulator's own helpers: its runs, what a node sends
from radio_sim_runs import finish, in_frame_order, start_radio_sim  # noqa: E402
from sim_expect import NODE_VCC_MV, ntc_celsius, payload_frame  # noqa: E402

FIRMWARE = ROOT / "firmware"
NODE_ID, SAMPLE_S = 1, 2
SETTINGS = [f"NODE_ID={NODE_ID}", f"SAMPLE_SECONDS={SAMPLE_S}"]
COLD_MV = 2500  # on A0 (temp_in): 1.39 °C, frost
RADIO_S = 12
# The simulated board already runs the ELF the build made: no bootloader to reset (a pty has no DTR) or talk to.
NO_FLASHING = ["RESET_CMD=true", "AVRDUDE=true"]
CONFIG = "etc/telemetry-gateway/config.toml"
UNIT = "telemetry-gateway.service"
HOST_NAME = "greenhouse-pi.local"


def grower(*command, cwd: Path = ROOT, env: dict | None = None, timeout: float = 300) -> str:
    """A command as the README shows it, run from the checkout; its output (stdout, then stderr)."""
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def edit(path: Path, old: str, new: str) -> None:
    """One edit of the installed config, as a user makes it; the text must be there exactly once."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


def enable_frost_rule(config: Path, edits: dict[str, str]) -> None:
    """The example's advice: 'Uncomment a rule by removing the first "#" of each line.', then edits in that rule."""
    text = config.read_text()
    block = re.search(r"^# \[\[alerts\]\]\n## Frost:.*?\n# command = .*?\n", text, re.S | re.M)
    assert block, "no commented frost rule at the end of the installed config"
    rule = re.sub(r"^#", "", block.group(0), flags=re.M)
    for old, new in edits.items():
        assert rule.count(old) == 1, f"{old!r} is not in the frost rule exactly once:\n{rule}"
        rule = rule.replace(old, new)
    config.write_text(text.replace(block.group(0), rule))


def board_on_a_pty(elf: Path, port: Path, eeprom_out: Path) -> subprocess.Popen:
    """The compiled sketch on simavr, paced to the wall clock, its UART on a pty that resets it when opened."""
    board = subprocess.Popen([FIRMWARE / "build/tests/sim_uno", "-p", port, "-R", "-r", "-w", "120", "-o", eeprom_out,
                              "-v", str(NODE_VCC_MV), "-a", f"0={COLD_MV}", elf],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: port.is_symlink() or board.poll() is not None, 10, "the simulated board's pty")
    assert port.is_symlink(), board.communicate()[1]
    return board


def printed_frames(trace: Path) -> list[dict[str, float]]:
    """The values of every signed line ($T2) the base station printed for the node, in order."""
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    payloads = [bytes.fromhex(r["uart"].split(",")[2].split("*")[0]) for r in lines
                if r.get("board") == "base" and r.get("uart", "").startswith(f"$T2,node{NODE_ID},")]
    return [payload_frame(payload)[2] for payload in payloads]


def stored(session) -> list[tuple[int, dict[str, float]]]:
    """(ts ms, values) of every frame stored for the node, oldest first."""
    by_ts: dict[int, dict[str, float]] = {}
    for day in utc_days_around_now():
        for row in session.execute("SELECT metric, ts, value FROM readings WHERE source = %s AND day = %s",
                                   [f"node{NODE_ID}", day]):
            by_ts.setdefault(int(row.ts.replace(tzinfo=timezone.utc).timestamp() * 1000), {})[row.metric] = row.value
    return sorted(by_ts.items())


def utc(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def as_text(value: float) -> str:
    return repr(value).removesuffix(".0")


def status_page(port: int, path: str) -> bytes:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": f"{HOST_NAME}:{port}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.read()


@needs_root
@pytest.mark.cassandra
def test_the_first_hour_as_the_readmes_tell_it(work, cassandra_node, fresh_keyspace, web_hook):  # noqa: F811
    # deploy/pi/README.md: the install, applying the schema to the Cassandra node on "the Pi"; it takes a while
    # (the venv), so it runs meanwhile, as in a second terminal.
    root = seeded_root(work / "root")
    relocated = {"TELEMETRY_CASSANDRA_KEYSPACE": fresh_keyspace,
                 "TELEMETRY_SPOOL_PATH": str(root / "var/lib/telemetry-gateway/spool.sqlite")}
    with ThreadPoolExecutor(1) as pool:
        install = pool.submit(run, INSTALL, "--root", root, "--migrate",
                              env={"TELEMETRY_CASSANDRA_PORT": "9042", **relocated})
        board_eeprom = a_board_gets_its_key(work)
        installed = install.result()
    assert "  applied 001_core_tables.cql" in installed.stdout, installed.stdout
    first_hour_on_the_pi(work, root, relocated, board_eeprom, cassandra_node, fresh_keyspace, web_hook)


def a_board_gets_its_key(work: Path) -> Path:
    """firmware/README.md: the keys, once; the sketch built and uploaded (it warns that it has no key yet), then its
    key over the same cable. Returns the board's EEPROM image."""
    keys = work / "keys.txt"
    assert "make-keys: 6 keys in" in grower(FIRMWARE / "scripts/make-keys", "6", keys)
    grower("make", "-s", "-C", FIRMWARE, "sim-runner")
    grower("make", "-C", FIRMWARE / "sensor_node", *SETTINGS)
    elf = Path(grower("make", "-s", "-C", FIRMWARE / "sensor_node", *SETTINGS, "elf-path").strip())
    usb, board_eeprom = work / "ttyUSB0", work / "board.eep"
    board = board_on_a_pty(elf, usb, board_eeprom)
    try:
        uploaded = grower("make", "-C", FIRMWARE / "sensor_node", "upload", f"PORT={usb}", *SETTINGS, *NO_FLASHING)
        assert f"firmware/scripts/provision {usb} {NODE_ID} --keys keys.txt --no-flash" in uploaded, uploaded
        provisioned = grower(FIRMWARE / "scripts/provision", usb, NODE_ID, "--keys", keys, "--no-flash", timeout=60)
        assert re.fullmatch(rf"node {NODE_ID} provisioned, key fingerprint [0-9a-f]{{16}} \(a new key; .*\)\n",
                            provisioned), provisioned
    finally:
        board.send_signal(signal.SIGTERM)
        summary = board.communicate(timeout=30)[1]
    assert "state=signal" in summary and board_eeprom.exists(), summary
    return board_eeprom


def first_hour_on_the_pi(work: Path, root: Path, relocated: dict[str, str], board_eeprom: Path, cassandra_node: str,
                         keyspace: str, web_hook) -> None:  # noqa: F811
    keys = work / "keys.txt"
    # What the "left:" lines say: the port, the keys (README, Signing keys: the file and the unit's drop-in), a
    # frost alert to a web hook, the status page open to the farm's network.
    config, base_port, hook_url = root / CONFIG, work / "ttyUSB-base", f"{web_hook.url}/greenhouse-frost"
    edit(config, 'ports = ["/dev/ttyUSB0"]', f'ports = ["{base_port}"]')
    (root / "etc/telemetry-gateway/keys").write_bytes(keys.read_bytes())
    os.chmod(root / "etc/telemetry-gateway/keys", 0o600)
    drop_in = root / f"etc/systemd/system/{UNIT}.d/override.conf"
    drop_in.parent.mkdir()
    drop_in.write_text("[Service]\nLoadCredential=keys:/etc/telemetry-gateway/keys\n"
                       "Environment=TELEMETRY_SIGNING_KEYS_CREDENTIAL=keys\n")
    notifier = "/usr/local/bin/telemetry-alert-webhook"
    enable_frost_rule(config, {"https://ntfy.sh/CHANGE-ME-greenhouse": hook_url, "for_s = 600.0": "for_s = 2.0",
                               notifier: f"{root}{notifier}"})
    status_port = free_port()
    edit(config, 'listen = "127.0.0.1:9108"', f'listen = "0.0.0.0:{status_port}"')
    edit(config, "host_names = []", f'host_names = ["{HOST_NAME}"]')
    (root / "etc/telemetry-gateway/environment").write_text("".join(f"{k}={v}\n" for k, v in relocated.items()))

    # firmware/README.md: the board in the greenhouse, heard by the base station on the Pi's USB port.
    trace = work / "trace.jsonl"
    radio = start_radio_sim(base_port, trace, "--nodes", "1", "--sample-s", str(SAMPLE_S), "--seconds", str(RADIO_S),
                            "--eeprom", f"{NODE_ID}:{board_eeprom}", "--analog", f"{NODE_ID}:0={COLD_MV}")
    started = None
    try:
        device = os.readlink(base_port)  # as udev leaves a USB serial adapter: root:dialout 0660
        os.chown(device, 0, int(account(root, "dialout", "group")[2]))
        os.chmod(device, 0o660)
        credentials = root / "etc/telemetry-gateway/credentials.toml"
        checked = run(root / "opt/telemetry-gateway/venv/bin/telemetry-gateway", "check", "--config", config,
                      env={"TELEMETRY_CASSANDRA_CREDENTIALS_FILE": str(credentials), "TELEMETRY_CASSANDRA_PORT": "9042",
                           **relocated})
        assert "check: OK" in checked.stdout + checked.stderr, checked.stdout + checked.stderr
        started = start_unit(root, UNIT, work, work / "gateway.log")
        assert started.messages("READY=1")[-1].startswith("READY=1"), (work / "gateway.log").read_text()

        cluster = connect(cassandra_node)
        try:
            db = cluster.connect(keyspace)
            posted = wait_for(lambda: web_hook.posted("/greenhouse-frost"), 40, "the frost push")
            sent = finish(radio)
            frames = printed_frames(trace)
            assert len(frames) >= 4 and sent["delivered"] == len(frames), (sent, frames)
            wait_for(lambda: len(stored(db)) == len(frames), 30, "a row for every frame the base station printed")
            rows = stored(db)
        finally:
            cluster.shutdown()
        assert [in_frame_order(values) for _, values in rows] == frames  # exactly what the board sent, in order
        cold = ntc_celsius(COLD_MV * 1023 / NODE_VCC_MV)
        assert all(abs(values["temp_in"] - cold) < 0.05 for _, values in rows), (cold, rows)

        # The frost rule raised at the first reading 2 s of readings after the first cold one.
        first = rows[0][0]
        at, values = next((ts, values) for ts, values in rows if ts - first >= 2000)
        [push] = posted
        value = as_text(values["temp_in"])
        assert push.text == f"frost: node{NODE_ID} temp_in {value}, below 2, {utc(at)}", push.text
        assert (push.headers["Title"], push.headers["Priority"], push.headers["Tags"]) == (
            f"frost on node{NODE_ID}", "high", "warning")

        status = json.loads(status_page(status_port, "/status.json"))
        [source] = [item for item in status["sources"] if item["source"] == f"node{NODE_ID}"]
        assert [(alert["rule"], alert["state"]) for alert in source["alerts"]] == [("frost", "firing")], source
        assert {item["metric"]: item["value"] for item in source["values"]} == rows[-1][1], source  # its last frame
        assert source["rejects"] == {} and not source["stale"], source
        assert status_page(status_port, "/").startswith(b"<!DOCTYPE html>")  # the page that shows status.json
    finally:
        if radio.poll() is None:
            radio.kill()
        if started is not None:
            started.process.send_signal(signal.SIGTERM)
            assert started.process.wait(timeout=30) == 0, (work / "gateway.log").read_text()
            started.notify.close()
    log = (work / "gateway.log").read_text()
    assert "event=alert_raised rule=frost source=node1 " in log and "Traceback" not in log, log
