"""What deploy/pi/install prints last: what is left before the gateway hears the boards, one actionable line each.

Run by the install with the system's python3 (standard library only): it reads the installed config and
credentials, and the gateway's `check` output, and prints `left: ITEM: what, then what to do`. The findings are pure
functions of those (tested in deploy/pi/tests/test_left_to_do.py); only main() reads files.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import stat
import sys
import tomllib
from pathlib import Path

CONFIG_DIR = "/etc/telemetry-gateway"
KEYS = f"{CONFIG_DIR}/keys"
PROVISION = "firmware/scripts/provision"


def port_paths(ports: list) -> list[str]:
    """[serial] ports' paths: "PATH", "PATH@BAUD" or a table with path (config.md)."""
    paths = []
    for port in ports:
        if isinstance(port, dict):
            paths.append(str(port.get("path", "")))
        else:
            path, at, baud = str(port).rpartition("@")
            paths.append(path if at and baud.isdigit() else str(port))
    return paths


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def keys_left(signing: dict, exists) -> list[str]:
    keys_file, credential = signing.get("keys_file", ""), signing.get("keys_credential", "")
    if keys_file and not exists(keys_file):
        return [f"keys: keys_file {keys_file} does not exist: make it with {PROVISION} PORT NODE_ID --keys "
                f"{keys_file} (one per board), mode 0600"]
    if credential and not exists(KEYS):
        return [f"keys: keys_credential {credential} is set but {KEYS} does not exist: make it with {PROVISION} "
                f"PORT NODE_ID --keys {KEYS} and add the unit's drop-in (deploy/pi/README.md, Signing keys)"]
    if not keys_file and not credential:
        return [f"keys: none, so boards that sign are refused (bad_mac): give each board its key with {PROVISION} "
                f"PORT NODE_ID --keys {KEYS}, then hand that file to the unit with a drop-in (deploy/pi/README.md, "
                f"Signing keys)"]
    return []


def signing_with_drop_ins(signing: dict, drop_ins: list[str]) -> dict:
    """[signing] as the unit sees it: a drop-in's Environment=TELEMETRY_SIGNING_KEYS_CREDENTIAL=NAME (the README's
    way to hand the keys to the unit) names the credential when the config names no keys."""
    if signing.get("keys_file") or signing.get("keys_credential"):
        return signing
    for text in drop_ins:
        for line in text.splitlines():
            if line.strip().startswith("Environment="):
                for assignment in shlex.split(line.strip().removeprefix("Environment=")):
                    key, _, value = assignment.partition("=")
                    if key == "TELEMETRY_SIGNING_KEYS_CREDENTIAL" and value:
                        signing = {**signing, "keys_credential": value}
    return signing


def ports_left(serial: dict, exists) -> list[str]:
    paths = port_paths(serial.get("ports", []))
    hint = "put your boards' /dev/telemetry/<serial number> names in [serial] ports (ls -l /dev/telemetry/)"
    if not paths:
        return [f"ports: none configured: {hint}"]
    return [f"ports: {path} is not present: plug the board in, or {hint}" for path in paths if not exists(path)]


def credentials_left(path: str, mode: int | None, text: str | None) -> list[str]:
    if mode is None:
        return [f"credentials: {path} is missing: run the install again (it writes one), then set the password"]
    if stat.S_IMODE(mode) & 0o077:
        return [f"credentials: {path} is mode {stat.S_IMODE(mode):04o}, the gateway refuses it: chmod 600 {path}"]
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as error:
        return [f"credentials: {path} is not TOML ({error}): username = \"...\" and password = \"...\""]
    if not data.get("password"):
        return [f"credentials: no password in {path}: set the telemetry_gateway role's password if the cluster "
                f"authenticates (deploy/tls/README.md), else leave it empty"]
    return []


def alerts_left(alerts: list) -> list[str]:
    if not alerts:
        return ["alerts: none enabled: uncomment the [[alerts]] rules (frost, heat, a silent board) at the end of "
                f"{CONFIG_DIR}/config.toml with your own ntfy topic, and try the hook with "
                "telemetry-alert-webhook --test --format text https://ntfy.sh/<your topic>"]
    return [f"alerts: rule {rule.get('name', '?')} still sends to the CHANGE-ME placeholder: put your own topic in"
            for rule in alerts if "CHANGE-ME" in " ".join(map(str, rule.get("command", [])))]


def status_page_left(metrics: dict) -> list[str]:
    listen = metrics.get("listen", "127.0.0.1:9108")
    if not listen:
        return ["status page: off ([metrics] listen = \"\")"]
    host, _, port = listen.rpartition(":")
    if is_loopback(host):
        return [f"status page: http://{listen}/ answers on this Pi only: to open it to the farm's network set "
                f"[metrics] listen = \"0.0.0.0:{port}\" and host_names = [\"<this Pi's name>.local\"], and allow "
                f"TCP {port} from the farm's network only (deploy/pi/README.md, The status page)"]
    return []


def cassandra_left(check_output: str, migrate_command: str) -> list[str]:
    """From `check`'s problem lines: no connection, or the schema not applied."""
    left = []
    for line in check_output.splitlines():
        problem = line.removeprefix("problem: ")
        if problem == line:
            continue
        if problem.startswith("cannot reach Cassandra"):
            left.append(f"cassandra: {problem.split(': ')[0]}: set [cassandra] hosts and local_dc, then apply "
                        f"the schema: {migrate_command}")
        elif " lacks " in problem:
            left.append(f"schema: {problem.split(':')[0]}: apply it: {migrate_command}")
    return left


def left_to_do(config: dict, credentials: tuple[str, int | None, str | None], check_output: str,
               migrate_command: str, exists) -> list[str]:
    return (ports_left(config.get("serial", {}), exists) + keys_left(config.get("signing", {}), exists)
            + credentials_left(*credentials) + cassandra_left(check_output, migrate_command)
            + alerts_left(config.get("alerts", [])) + status_page_left(config.get("metrics", {})))


def spool_path(config: dict) -> str:
    return config.get("spool", {}).get("path", "/var/lib/telemetry-gateway/spool.sqlite")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="deploy/pi/left_to_do.py", description=__doc__)
    p.add_argument("--root", default="", help="the install's --root (paths of the config are inside it)")
    p.add_argument("--check-output", type=Path, help="the gateway's `check` output (stdout and stderr)")
    p.add_argument("--migrate-command", default="telemetry-schema-migrate", help="the command that applies the schema")
    p.add_argument("--spool-path", action="store_true", help="print the config's [spool] path and stop")
    args = p.parse_args(argv)
    root = args.root.rstrip("/")
    with open(f"{root}{CONFIG_DIR}/config.toml", "rb") as f:
        config = tomllib.load(f)
    if args.spool_path:
        print(spool_path(config))
        return 0
    credentials = f"{CONFIG_DIR}/credentials.toml"
    try:
        mode, text = os.stat(root + credentials).st_mode, Path(root + credentials).read_text()
    except FileNotFoundError:
        mode, text = None, None
    output = args.check_output.read_text() if args.check_output else ""
    drop_ins = [path.read_text() for path in sorted(Path(f"{root}/etc/systemd/system").glob(
        "telemetry-gateway*.service.d/*.conf"))]
    config["signing"] = signing_with_drop_ins(config.get("signing", {}), drop_ins)
    for line in left_to_do(config, (credentials, mode, text), output, args.migrate_command,
                           lambda path: os.path.exists(root + path)):
        print(f"left: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
