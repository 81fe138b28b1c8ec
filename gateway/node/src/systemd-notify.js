// sd_notify for Type=notify units: READY, STATUS, WATCHDOG, STOPPING (gateway/contract/process.md).
//
// The protocol is one datagram on $NOTIFY_SOCKET, and Node cannot send unix datagrams, so each message is handed
// to systemd's own `systemd-notify` as arguments (`systemd-notify WATCHDOG=1 'STATUS=spooled 3 frames'` sends the
// datagram "WATCHDOG=1\nSTATUS=spooled 3 frames"). The sender is then a
// child process, not the unit's main process, so a unit running this gateway needs NotifyAccess=all (systemd drops
// messages from other processes of the unit under the default NotifyAccess=main for Type=notify). systemd-notify
// waits (BARRIER=1, up to 5 s) until systemd has read the message, so systemd can still tell which unit sent it.

import { spawn } from 'node:child_process';

import { event } from './logs.js';

/** A notification's child gets this long before it is killed (systemd-notify itself gives up after 5 s). */
const CHILD_TIMEOUT_MS = 10_000;

export class SystemdNotifier {
  /**
   * @param {{env?: Record<string, string | undefined>, pid?: number, command?: string}} [options] env and pid:
   *   this process's by default (tests give their own); command: the systemd-notify to run
   */
  constructor({ env = process.env, pid = process.pid, command = 'systemd-notify' } = {}) {
    this.socket = env.NOTIFY_SOCKET ?? ''; // "@name" (abstract) is systemd-notify's to resolve
    this.env = { ...env, NOTIFY_SOCKET: this.socket };
    this.command = command;
    const usec = env.WATCHDOG_USEC ?? '';
    const watchdogPid = env.WATCHDOG_PID ?? '';
    const mine = !watchdogPid || watchdogPid === String(pid);
    /** Seconds between watchdog pings (half of WATCHDOG_USEC), or null: no watchdog for this process. */
    this.watchdogIntervalS = /^[0-9]+$/.test(usec) && mine ? Number(usec) / 2e6 : null;
    this.unavailable = false; // no systemd-notify to run: said once, then every notification is skipped
    this.queue = Promise.resolve(); // one child at a time, so systemd reads READY before STOPPING
  }

  /**
   * Sends state ("READY=1", "WATCHDOG=1\nSTATUS=...": one assignment a line) without blocking; a no-op without
   * $NOTIFY_SOCKET. Resolves once it is sent (or was not: systemd gone at shutdown has nothing to be told); never
   * rejects.
   * @param {string} state
   * @returns {Promise<void>}
   */
  notify(state) {
    if (!this.socket) return Promise.resolve();
    const assignments = state.split('\n').filter(Boolean);
    this.queue = this.queue.then(() => this.run(assignments));
    return this.queue;
  }

  run(assignments) {
    if (this.unavailable) return undefined;
    return new Promise((resolve) => {
      // "--": the assignments are never options, whatever they start with.
      const child = spawn(this.command, ['--', ...assignments], { env: this.env, stdio: 'ignore' });
      // Not spawn's timeout option: its timer outlives a child that never started, holding the process 10 s.
      const timer = setTimeout(() => child.kill(), CHILD_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      child.once('error', (error) => {
        if (error.code === 'ENOENT' && !this.unavailable) {
          this.unavailable = true;
          event('warning', 'systemd_notify_unavailable', { error: error.message,
            action: 'systemd is not told READY, WATCHDOG or STOPPING' });
        }
        done();
      });
      child.once('close', done); // its exit status says only whether systemd was listening
    });
  }
}
