"""sd_notify for Type=notify units: READY, STATUS, WATCHDOG, STOPPING.

The protocol is one datagram on $NOTIFY_SOCKET; written here (a dozen lines) rather than adding a dependency
that needs libsystemd headers to build on the Pi.
"""

from __future__ import annotations

import logging
import os
import socket

from .logs import event


class SystemdNotifier:
    def __init__(self) -> None:
        address = os.environ.get("NOTIFY_SOCKET", "")
        self._address = "\0" + address[1:] if address.startswith("@") else address
        usec = os.environ.get("WATCHDOG_USEC", "")
        pid = os.environ.get("WATCHDOG_PID", "")
        mine = not pid or pid == str(os.getpid())
        self.watchdog_interval_s = int(usec) / 2e6 if usec.isdigit() and mine else None
        self._said_unavailable = False

    def notify(self, message: str) -> None:
        if not self._address:
            return
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            try:
                sock.sendto(message.encode(), self._address)
            except OSError as error:  # systemd gone (at shutdown) or never there: said once
                if not self._said_unavailable:
                    self._said_unavailable = True
                    event(logging.WARNING, "systemd_notify_unavailable", socket=os.environ.get("NOTIFY_SOCKET"),
                          error=str(error), action="systemd is not told READY, WATCHDOG or STOPPING")
