"""A serial port's lines: opened keeping the kernel's input buffer, reopened as serial.md says when the device goes
away or does not open."""

from __future__ import annotations

import logging
import os
import threading
from typing import Callable

import serial

from .contract_constants import contract_seconds
from .line_handler import READ_CHUNK, LineHandler
from .logs import ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog, event
from .reopen_schedule import ReopenSchedule

# How often a vanished port's path is checked: reopened as soon as it is back.
WAIT_FOR_DEVICE_S = contract_seconds("device_watch_ms")


class KeepInputSerial(serial.Serial):
    """pyserial's open() flushes the kernel's input buffer (tcflush). What it holds was sent by the board while no
    process read the port, e.g. during a gateway restart: keep it. A new device (a replug) brings an empty buffer."""

    _opening = False

    def open(self) -> None:
        self._opening = True
        try:
            super().open()
        finally:
            self._opening = False

    def _reset_input_buffer(self) -> None:
        if not self._opening:
            super()._reset_input_buffer()


class SerialInput:
    def __init__(self, path: str, baud: int, handler: LineHandler, stop: threading.Event,
                 backoff: Callable[[int], float], up_gauge) -> None:
        self.path, self.baud = path, baud
        self._handler = handler
        self._stop = stop
        self._backoff = backoff
        self._up = up_gauge
        self._log = RateLimitedLog(interval_s=LONG_INTERVAL_S)

    def run(self) -> None:
        schedule = ReopenSchedule(self._backoff, WAIT_FOR_DEVICE_S)
        while not self._stop.is_set():
            if not os.path.exists(self.path):  # unplugged: watch the path, no backoff, reopen the moment it is back
                self._up.set(0)
                self._log.event(logging.WARNING, "serial_absent", key=self.path, port=self.path,
                                action="waiting for the device; reopened as soon as it appears")
                self._stop.wait(schedule.wait_s("absent"))
                continue
            try:
                port = KeepInputSerial(self.path, self.baud, timeout=0.2)
            except (serial.SerialException, OSError, ValueError) as error:
                self._up.set(0)
                self._log.event(logging.WARNING, "serial_unavailable", key=self.path, port=self.path,
                                error=str(error)[:ERROR_CHARS], action="retrying with backoff")
                self._stop.wait(schedule.wait_s("fails"))
                continue
            schedule.wait_s("opens")  # once the port is lost, it is tried again at once
            self._up.set(1)
            event(logging.INFO, "serial_open", port=self.path, baud=self.baud)
            try:
                self._read(port)
            except (serial.SerialException, OSError) as error:
                event(logging.WARNING, "serial_lost", port=self.path, error=str(error)[:ERROR_CHARS],
                      action="reopening when the device is back")
            finally:
                self._up.set(0)
                port.close()  # pyserial leaves is_open set after a vanished device

    def _read(self, port: serial.Serial) -> None:
        self._handler.restart()
        credits = self._handler.credits
        while not self._stop.is_set():
            if not credits.acquire(timeout=0.2):
                continue  # the spool has no room, or the ingest is behind: the bytes wait in the kernel
            try:
                data = port.read(min(READ_CHUNK, max(1, port.in_waiting)))
            except BaseException:
                credits.release()
                raise
            if not (data and self._handler.feed(data)):
                credits.release()
