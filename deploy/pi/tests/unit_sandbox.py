"""Starts an installed unit's gateway (deploy/pi/install --root R) the way systemd would, as far as this machine can
without systemd as PID 1: the unit and its drop-ins (UNIT.d/*.conf), ExecStart, Environment= (%d expanded),
EnvironmentFile=, LoadCredential= (a private copy in $CREDENTIALS_DIRECTORY, 0400, owned by the service user), a
clean environment with systemd's PATH, NOTIFY_SOCKET and WATCHDOG_USEC, the unit's User=/Group=/SupplementaryGroups=
(numeric, from R's passwd and group), UMask=, NoNewPrivileges= and an empty capability set (setpriv), and in a mount
namespace of its own: ProtectSystem=strict (/ read-only) with the StateDirectory= writable, and PrivateTmp= (an
empty /tmp and /var/tmp, but for the one that holds this checkout). Not emulated here: the seccomp filter,
DevicePolicy=, RestrictAddressFamilies=, ProtectHome= and the Protect*Kernel* settings; those are checked by
`systemd-analyze` (test_pi_units.py)."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pi_units import service_settings

SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"


def ids(root: Path, name: str, database: str) -> int:
    for line in (root / "etc" / database).read_text().splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2])
    raise AssertionError(f"no {name} in {root}/etc/{database}")


@dataclass
class Started:
    process: subprocess.Popen
    notify: socket.socket
    credentials: Path  # $CREDENTIALS_DIRECTORY

    def messages(self, until: str, timeout: float = 30) -> list[str]:
        """Notify messages received until one contains `until`."""
        self.notify.settimeout(timeout)
        got = []
        while not got or until not in got[-1]:
            got.append(self.notify.recv(4096).decode())
        return got


def start_unit(root: Path, unit_name: str, work: Path, log: Path) -> Started:
    """Runs the unit installed under root, its output into log; work: a folder outside /tmp for the credentials and
    the notify socket."""
    unit = root / "etc/systemd/system" / unit_name
    settings = service_settings(unit.read_text())
    # Drop-ins (`systemctl edit` writes UNIT.d/override.conf): their settings after the unit's, in name order.
    for drop_in in sorted(unit.parent.glob(f"{unit_name}.d/*.conf")):
        for key, values in service_settings(drop_in.read_text()).items():
            settings.setdefault(key, []).extend(values)
    one = {key: values[-1] for key, values in settings.items()}
    uid, gid = ids(root, one["User"], "passwd"), ids(root, one["Group"], "group")
    groups = [ids(root, g, "group") for g in one.get("SupplementaryGroups", "").split()]

    credentials = work / "credentials"
    shutil.rmtree(credentials, ignore_errors=True)
    credentials.mkdir(mode=0o500)
    for entry in settings.get("LoadCredential", []):
        name, source = entry.split(":", 1)
        shutil.copyfile(root / source.lstrip("/"), credentials / name)
        os.chmod(credentials / name, 0o400)
        os.chown(credentials / name, uid, gid)
    os.chown(credentials, uid, gid)

    notify_path = work / "notify.sock"
    notify_path.unlink(missing_ok=True)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    os.chmod(notify_path, 0o777)

    env = {"PATH": SYSTEMD_PATH, "LANG": "C.UTF-8", "HOME": "/var/lib/telemetry-gateway", "USER": one["User"],
           "LOGNAME": one["User"], "NOTIFY_SOCKET": str(notify_path),
           "WATCHDOG_USEC": str(int(one["WatchdogSec"]) * 1_000_000), "CREDENTIALS_DIRECTORY": str(credentials)}
    for assignments in settings.get("Environment", []):
        for assignment in shlex.split(assignments.replace("%d", str(credentials))):
            key, _, value = assignment.partition("=")
            env[key] = value
    for entry in settings.get("EnvironmentFile", []):
        path = root / entry.lstrip("-").lstrip("/")
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip() and not line.startswith("#"):
                    key, _, value = line.partition("=")
                    env[key.strip()] = value.strip()

    # The unit's absolute paths (/opt/…, /etc/…) are under root here.
    command = [str(root / arg.lstrip("/")) if arg.startswith(("/opt/", "/etc/")) else arg
               for arg in shlex.split(one["ExecStart"])]
    state = root / "var/lib" / one["StateDirectory"]
    # PrivateTmp=: an empty /tmp and /var/tmp, except where this checkout itself lives (a clone under /tmp would
    # vanish with the installed root in it; only that one then stays visible).
    needed = [str(p.resolve()) for p in (root, work)]
    private = [d for d in ("/tmp", "/var/tmp") if not any(n == d or n.startswith(d + "/") for n in needed)]
    sandbox = ("".join(f"mount -t tmpfs -o mode=1777 tmpfs {d} && " for d in private) +
               f"mount --bind {shlex.quote(str(state))} {shlex.quote(str(state))} && "
               f"mount -o remount,bind,ro / && umask {one['UMask']} && "
               f"exec setpriv --reuid={uid} --regid={gid} --groups={','.join(map(str, groups))} --no-new-privs "
               f"--inh-caps=-all --bounding-set=-all -- {shlex.join(command)}")
    process = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", sandbox],
                               env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    return Started(process, notify, credentials)
