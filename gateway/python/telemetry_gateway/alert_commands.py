"""The alert rules' commands (gateway/contract/alerts.md, "The command"): an argv list, never a shell, the alert in
its environment, killed after its timeout; at most one run in flight per rule, later transitions of a rule wait
(the newest per source), each rule's runs on a thread of their own so the ingest never waits for a command."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from collections import OrderedDict
from typing import Callable, Mapping

from .alert_rules import AlertRule
from .alert_states import Transition
from .logs import ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog
from .text_forms import field_text
from .timestamps import iso_ms

# The only variables of the gateway's environment a command gets (alerts.md): an allow-list, because a service's
# environment carries more than the gateway's own TELEMETRY_* (CREDENTIALS_DIRECTORY, NOTIFY_SOCKET, WATCHDOG_*).
PASSED_ENV = ("PATH", "LANG", "HOME", "TZ")


def command_env(transition: Transition, base: Mapping[str, str]) -> dict[str, str]:
    """The command's environment: the allow-listed variables of base, plus ALERT_*."""
    env = {name: base[name] for name in PASSED_ENV if name in base}
    env.update(ALERT_RULE=transition.rule, ALERT_SOURCE=transition.source, ALERT_STATE=transition.state,
               ALERT_KIND=transition.kind, ALERT_METRIC=transition.metric or "",
               ALERT_VALUE=field_text(float(transition.value)), ALERT_THRESHOLD=field_text(float(transition.threshold)),
               ALERT_AT=str(transition.at), ALERT_TIME=iso_ms(transition.at))
    return env


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL to the run's process group (its own session): a script's children go with it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # already gone
        pass


def run_once(argv: tuple[str, ...], env: Mapping[str, str], timeout_s: float,
             started: Callable[[subprocess.Popen], None]) -> tuple[str, str] | None:
    """One run: None when it exited 0, else (reason, detail) as alert_command_failed names them."""
    try:
        process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        return "not_started", f"{argv[0]}: {error.strerror or error}"
    started(process)
    try:
        status = process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.wait()
        return "timeout", f"still running after {field_text(timeout_s)} s: killed"
    finally:
        kill_group(process)  # what the run left running in its group (a backgrounded child) ends with it
    if status > 0:
        return "exit_status", f"exit status {status}"
    if status < 0:
        return "signal", f"killed by signal {-status}"
    return None


class AlertCommands:
    def __init__(self, rules: tuple[AlertRule, ...], on_failure: Callable[[str], None],
                 base_env: Mapping[str, str] = os.environ) -> None:
        self._rules = {rule.name: rule for rule in rules if rule.command}
        self._on_failure = on_failure  # counts a failed run of the rule named
        self._base_env = base_env
        self._lock = threading.Lock()
        self._waiting: dict[str, OrderedDict[str, Transition]] = {name: OrderedDict() for name in self._rules}
        self._running: dict[str, subprocess.Popen | None] = {}  # rule -> its run's process (None: starting)
        self._threads: list[threading.Thread] = []
        self._stopped = False
        self._log = RateLimitedLog(interval_s=LONG_INTERVAL_S)

    def submit(self, transition: Transition) -> None:
        """Run the rule's command for this transition now, or after the run in flight (never blocks)."""
        if transition.rule not in self._rules:
            return
        with self._lock:
            if self._stopped:
                return
            waiting = self._waiting[transition.rule]
            waiting[transition.source] = transition  # a newer transition of a source replaces the one waiting
            if transition.rule in self._running:
                return
            self._running[transition.rule] = None
            thread = threading.Thread(target=self._drain, args=(transition.rule,), daemon=True,
                                      name=f"alert command {transition.rule}")
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _drain(self, name: str) -> None:
        rule = self._rules[name]
        while True:
            with self._lock:
                waiting = self._waiting[name]
                if self._stopped or not waiting:
                    del self._running[name]
                    return
                _source, transition = waiting.popitem(last=False)
            failure = run_once(rule.command, command_env(transition, self._base_env), rule.command_timeout_s,
                               lambda process: self._started(name, process))
            if failure is not None and not self._stopped:
                reason, detail = failure
                self._on_failure(name)
                self._log.event(logging.WARNING, "alert_command_failed", key=name, rule=name,
                                source=transition.source, state=transition.state, reason=reason,
                                detail=detail[:ERROR_CHARS], action="check the rule's command; the alert itself stands")

    def _started(self, name: str, process: subprocess.Popen) -> None:
        with self._lock:
            self._running[name] = process
            if self._stopped:
                kill_group(process)

    def stop(self) -> None:
        """Waiting runs are dropped, runs in flight killed: a stop waits for no command."""
        with self._lock:
            self._stopped = True
            for waiting in self._waiting.values():
                waiting.clear()
            processes = [process for process in self._running.values() if process is not None]
        for process in processes:
            if process.poll() is None:
                kill_group(process)

    def idle(self) -> bool:
        """No run in flight or waiting (tests wait for it)."""
        with self._lock:
            return not self._running
