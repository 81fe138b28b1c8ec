"""sd_notify for Type=notify units: READY, STATUS, WATCHDOG, STOPPING.

The protocol is one datagram on $NOTIFY_SOCKET; written here (a dozen lines) rather than adding a dependency
that needs libsystemd headers to build on the Pi.
"""

from __future__ import annotations

import os
import socket


class SystemdNotifier:
    def __init__(self) -> None:
        address = os.environ.get("NOTIFY_SOCKET", "")
        self._address = "\0" + address[1:] if address.startswith("@") else address
        usec = os.environ.get("WATCHDOG_USEC", "")
        pid = os.environ.get("WATCHDOG_PID", "")
        mine = not pid or pid == str(os.getpid())
        self.watchdog_interval_s = int(usec) / 2e6 if usec.isdigit() and mine else None

    def notify(self, message: str) -> None:
        if not self._address:
            return
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            try:
                sock.sendto(message.encode(), self._address)
            except OSError:
                pass  # systemd gone (shutdown): nothing to tell
