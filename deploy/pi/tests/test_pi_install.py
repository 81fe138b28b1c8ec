"""deploy/pi/install and uninstall, for real, into a temporary root seeded like a Debian system with systemd (its
passwd, group and shadow files, systemd's own units): users, files, owners, modes, the enabled unit passing
`systemd-analyze verify --root`, the installed gateway started as its unit starts it (unit_sandbox.py), a second
install changing nothing but the gateway, the Node gateway replacing the Python one, and uninstall keeping the
data unless --purge. The tests run in file order on one root, each building on the one before.

The Python install builds its venv with the system's python3 from requirements.lock with pip (about a minute:
PyPI or pip's cache). The Node install copies this checkout's node_modules (--node-modules-from) instead of
`npm ci`, which would build better-sqlite3 from source."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from telemetry_conformance import Board, Stream, free_port, scrape_metrics, wait_for
from pi_units import PI, ROOT, systemd_analyze
from telemetry_board_sim import encode_frame
from unit_sandbox import SYSTEMD_PATH, start_unit

INSTALL, UNINSTALL = PI / "install", PI / "uninstall"
EXAMPLE = ROOT / "gateway" / "contract" / "telemetry-gateway.example.toml"
NODE_MODULES = ROOT / "gateway" / "node" / "node_modules"
# What install writes outside the gateway's own folder under /opt.
INSTALLED = ["etc/sysusers.d/telemetry-gateway.conf", "etc/telemetry-gateway", "etc/telemetry-gateway/config.toml",
             "etc/telemetry-gateway/credentials.toml", "var/lib/telemetry-gateway",
             "etc/udev/rules.d/70-telemetry-serial.rules", "etc/modules-load.d/telemetry-gateway.conf",
             "usr/local/bin/telemetry-alert-webhook", "usr/local/bin/telemetry-schema-migrate"]
NOTIFIER = ROOT / "deploy" / "notify" / "telemetry-alert-webhook"


def run(*command, check=True, env: dict | None = None) -> subprocess.CompletedProcess:
    # The system's python3 and node, as on a Pi (not a python3 of the user's own, e.g. pyenv's). The install's
    # check finds no Cassandra (port 1) unless env says otherwise.
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PATH": SYSTEMD_PATH, "TELEMETRY_CASSANDRA_PORT": "1", **(env or {})})
    assert not check or result.returncode == 0, f"{command}: {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def seeded_root(path: Path) -> Path:
    """A root with what install expects of the system: accounts (with dialout) and systemd's units."""
    (path / "etc").mkdir(parents=True)
    for name in ("passwd", "group", "shadow", "gshadow"):
        if os.access(f"/etc/{name}", os.R_OK):  # shadow files: root only; systemd-sysusers makes them if absent
            shutil.copy2(f"/etc/{name}", path / "etc" / name)
    assert "\ndialout:" in "\n" + (path / "etc" / "group").read_text()
    shutil.copytree("/lib/systemd/system", path / "usr" / "lib" / "systemd" / "system", symlinks=True)
    return path


def account(root: Path, name: str, database: str = "passwd") -> list[str] | None:
    for line in (root / "etc" / database).read_text().splitlines():
        if line.split(":")[0] == name:
            return line.split(":")
    return None


AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="needs root: a mount namespace, another user")


def owned(uid: int, gid: int) -> tuple[int, int]:
    """The owner install gives a file: the real one as root; as another user (no chown) that user's."""
    return (uid, gid) if AS_ROOT else (os.geteuid(), os.getegid())


def owner_and_mode(path: Path) -> tuple[int, int, str]:
    st = path.lstat()
    return st.st_uid, st.st_gid, oct(stat.S_IMODE(st.st_mode))


def frame_decoded_by(command: Path) -> dict:
    line = encode_frame("pi1", 7, [("temp_in", 21.5)])
    result = subprocess.run([str(command), "decode"], input=line, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout.decode().splitlines()[0])


@pytest.fixture(scope="module")
def work() -> Path:
    """Outside /tmp (the sandbox mounts an empty /tmp) and open to the service user (pytest's tmp folders are not)."""
    (ROOT / ".state").mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="pi-tests-", dir=ROOT / ".state"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


@pytest.fixture(scope="module")
def installed(work) -> Path:
    root = seeded_root(work / "root")
    run(INSTALL, "--root", root)
    return root


def gateway_runs_as_its_unit_starts_it(installed: Path, work: Path, unit_name: str) -> None:
    """With the installed config, credentials and unit (overrides in the unit's EnvironmentFile): ready, reads a
    root:dialout 0660 serial port, spools a frame (Cassandra unreachable) in the state directory, stops on SIGTERM
    with status 0; then with credentials lacking a password, the gateway names the file at %d/cassandra."""
    board = Board(work / "ttyUSB-board")
    os.chown(os.readlink(board.link), 0, int(account(installed, "dialout", "group")[2]))
    os.chmod(os.readlink(board.link), 0o660)
    metrics_port = free_port()
    spool = installed / "var/lib/telemetry-gateway/spool.sqlite"
    environment = installed / "etc/telemetry-gateway/environment"
    environment.write_text(f"TELEMETRY_SERIAL_PORTS={board.link}\nTELEMETRY_SPOOL_PATH={spool}\n"
                           f"TELEMETRY_CASSANDRA_PORT=1\nTELEMETRY_METRICS_LISTEN=127.0.0.1:{metrics_port}\n")
    log = work / f"{unit_name}.log"
    started = start_unit(installed, unit_name, work, log)
    metric = lambda name, **labels: (scrape_metrics(metrics_port) or {}).get(  # noqa: E731
        (name, tuple(sorted(labels.items()))), 0)
    try:
        assert started.messages("READY=1")[-1].startswith("READY=1"), log.read_text()
        wait_for(lambda: metric("telemetry_gateway_input_up", input=str(board.link)) == 1, 30, "the port open")
        board.write(Stream("pi1").frame(1, temp_in=20.5))
        wait_for(lambda: metric("telemetry_gateway_spool_frames") == 1, 30, "the frame in the spool")
        started.process.send_signal(signal.SIGTERM)
        assert started.process.wait(timeout=30) == 0, log.read_text()
        started.messages("STOPPING=1")
    finally:
        if started.process.poll() is None:
            started.process.kill()
        started.notify.close()
    output = log.read_text()
    assert "event=serial_absent" not in output and "Traceback" not in output, output
    user = account(installed, "telemetry")
    assert owner_and_mode(spool)[:2] == (int(user[2]), int(user[3])) and owner_and_mode(spool)[2] == "0o600"

    credentials = installed / "etc/telemetry-gateway/credentials.toml"
    kept = credentials.read_text()
    credentials.write_text('username = "telemetry_gateway"\n')
    started = start_unit(installed, unit_name, work, log)
    expected = f"credentials_file {started.credentials}/cassandra needs username and password strings"
    try:
        wait_for(lambda: expected in log.read_text(), 30, "the credentials error")
    finally:
        credentials.write_text(kept)
        if started.process.poll() is None:
            started.process.kill()
        started.notify.close()
        environment.unlink()
        board.unplug()
        for path in spool.parent.glob("spool.sqlite*"):  # the next gateway starts with an empty spool
            path.unlink()


def test_the_user_config_state_and_modes(installed):
    user = account(installed, "telemetry")
    group = account(installed, "telemetry", "group")
    assert user and group, "no telemetry user or group in the root's passwd/group"
    uid, gid = int(user[2]), int(group[2])
    assert int(user[3]) == gid and user[5:] == ["/var/lib/telemetry-gateway", "/usr/sbin/nologin"]
    assert uid < 1000, "not a system user"
    assert "telemetry" in account(installed, "dialout", "group")[3].split(",")
    assert owner_and_mode(installed / "etc/telemetry-gateway") == (*owned(0, gid), "0o750")
    assert owner_and_mode(installed / "etc/telemetry-gateway/config.toml") == (*owned(0, gid), "0o640")
    assert (installed / "etc/telemetry-gateway/config.toml").read_text() == EXAMPLE.read_text()
    assert owner_and_mode(installed / "etc/telemetry-gateway/credentials.toml") == (*owned(0, 0), "0o600")
    assert owner_and_mode(installed / "var/lib/telemetry-gateway") == (*owned(uid, gid), "0o750")
    assert (installed / "etc/modules-load.d/telemetry-gateway.conf").read_text().split("\n")[-3:] == \
        ["usbserial", "cdc_acm", ""]
    rule = (installed / "etc/udev/rules.d/70-telemetry-serial.rules").read_text()
    assert 'SYMLINK+="telemetry/$env{ID_SERIAL_SHORT}"' in rule and "ttyUSB[0-9]*|ttyACM[0-9]*" in rule
    notifier = installed / "usr/local/bin/telemetry-alert-webhook"
    assert owner_and_mode(notifier) == (*owned(0, 0), "0o755") and notifier.read_bytes() == NOTIFIER.read_bytes()
    # Nothing the service user may change in its own code.
    venv = installed / "opt/telemetry-gateway/venv"
    assert not [p for p in venv.rglob("*") if not p.is_symlink() and (p.lstat().st_mode & 0o022
                                                                       or p.lstat().st_uid != owned(0, 0)[0])]


def test_the_unit_is_installed_enabled_and_verifies(installed):
    unit = installed / "etc/systemd/system/telemetry-gateway.service"
    assert unit.read_text() == (PI / "telemetry-gateway.service").read_text()
    assert owner_and_mode(unit) == (*owned(0, 0), "0o644")
    wanted = installed / "etc/systemd/system/multi-user.target.wants/telemetry-gateway.service"
    assert os.readlink(wanted) == "/etc/systemd/system/telemetry-gateway.service"
    # --root: systemd-analyze finds the unit, its targets and its ExecStart inside the root.
    result = systemd_analyze("verify", f"--root={installed}", "telemetry-gateway.service")
    assert result.returncode == 0 and "telemetry-gateway" not in result.stderr, result.stderr


def test_the_installed_gateway_runs(installed):
    command = installed / "opt/telemetry-gateway/venv/bin/telemetry-gateway"
    assert frame_decoded_by(command)["kind"] == "frame"
    result = subprocess.run([str(command.parent / "python"), "-m", "pip", "check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    assert notifier_runs(installed)
    assert schema_runner_runs(installed)


def schema_runner_runs(installed: Path) -> bool:
    """/usr/local/bin's link names the venv's telemetry-schema-migrate, which starts (test_pi_schema.py runs it)."""
    link = installed / "usr/local/bin/telemetry-schema-migrate"
    assert os.readlink(link) == "/opt/telemetry-gateway/venv/bin/telemetry-schema-migrate"
    return run(installed / os.readlink(link).lstrip("/"), "--help").stdout.startswith("usage: telemetry-schema-migrate")


def notifier_runs(installed: Path) -> bool:
    """The installed notifier starts with the system's python3 (deploy/notify/tests holds what it sends)."""
    result = run(installed / "usr/local/bin/telemetry-alert-webhook", "--help")
    return result.stdout.startswith("usage: telemetry-alert-webhook")


@needs_root
def test_the_installed_unit_runs_the_python_gateway(installed, work):
    gateway_runs_as_its_unit_starts_it(installed, work, "telemetry-gateway.service")


def test_a_second_install_keeps_config_and_credentials(installed):
    def snapshot():
        return {p: owner_and_mode(installed / p) for p in INSTALLED}

    config, credentials = installed / "etc/telemetry-gateway/config.toml", installed / "etc/telemetry-gateway/credentials.toml"
    before = snapshot()
    config.write_text(config.read_text().replace('ports = ["/dev/ttyUSB0"]', 'ports = ["/dev/telemetry/A10K3XYZ"]'))
    credentials.write_text('username = "telemetry_gateway"\npassword = "s3cret"\n')
    run(INSTALL, "--root", installed)
    assert snapshot() == before
    assert 'ports = ["/dev/telemetry/A10K3XYZ"]' in config.read_text()
    assert 'password = "s3cret"' in credentials.read_text()
    assert [line.split(":")[0] for line in (installed / "etc/passwd").read_text().splitlines()].count("telemetry") == 1


def test_node_install_replaces_the_python_unit(installed):
    run(INSTALL, "--node", "--root", installed, "--node-modules-from", NODE_MODULES)
    wants = installed / "etc/systemd/system/multi-user.target.wants"
    assert sorted(p.name for p in wants.iterdir()) == ["telemetry-gateway-node.service"]
    unit = installed / "etc/systemd/system/telemetry-gateway-node.service"
    assert unit.read_text() == (PI / "telemetry-gateway-node.service").read_text()
    result = systemd_analyze("verify", f"--root={installed}", unit.name)
    assert result.returncode == 0 and "telemetry-gateway" not in result.stderr, result.stderr
    node_home = installed / "opt/telemetry-gateway-node"
    assert frame_decoded_by(node_home / "bin/telemetry-gateway-node")["kind"] == "frame"
    assert not (node_home / "contract").is_symlink() and (node_home / "contract/spool.sql").is_file()
    assert not (node_home / "test").exists()
    assert notifier_runs(installed) and schema_runner_runs(installed)  # either gateway's install has them


@needs_root
def test_the_installed_unit_runs_the_node_gateway(installed, work):
    gateway_runs_as_its_unit_starts_it(installed, work, "telemetry-gateway-node.service")


def test_uninstall_keeps_the_data_unless_purge(installed):
    wants = installed / "etc/systemd/system/multi-user.target.wants"
    node_home = installed / "opt/telemetry-gateway-node"
    spooled = installed / "var/lib/telemetry-gateway/spool.sqlite"
    spooled.write_bytes(b"frames not yet in Cassandra")
    run(UNINSTALL, "--root", installed)
    assert not list((installed / "etc/systemd/system").glob("telemetry-gateway*.service"))
    assert not wants.exists() or not list(wants.iterdir())
    assert not (installed / "opt/telemetry-gateway").exists() and not node_home.exists()
    assert not (installed / "etc/udev/rules.d/70-telemetry-serial.rules").exists()
    assert not (installed / "usr/local/bin/telemetry-alert-webhook").exists()
    assert not (installed / "usr/local/bin/telemetry-schema-migrate").is_symlink()
    assert spooled.read_bytes() == b"frames not yet in Cassandra"
    assert (installed / "etc/telemetry-gateway/credentials.toml").exists() and account(installed, "telemetry")

    run(UNINSTALL, "--root", installed, "--purge")
    assert not (installed / "var/lib/telemetry-gateway").exists()
    assert not (installed / "etc/telemetry-gateway").exists()
    assert account(installed, "telemetry") is None and account(installed, "telemetry", "group") is None
    assert "telemetry" not in account(installed, "dialout", "group")[3].split(",")


def test_install_on_the_system_itself_needs_root():
    as_another_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if AS_ROOT else []
    result = run(*as_another_user, INSTALL, check=False)
    assert result.returncode == 1 and "run as root" in result.stderr
