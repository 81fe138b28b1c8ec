// sd_notify through systemd-notify: the datagrams on $NOTIFY_SOCKET are process.md's, byte for byte (read from a
// datagram socket that a few lines of the project's Python hold, as a tool: Node cannot open one); the watchdog
// interval is read from the environment as process.md says; no socket, no child; no systemd-notify, one warning.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';

import { setupLogging } from '../src/logs.js';
import { SystemdNotifier } from '../src/systemd-notify.js';
import { PYTHON, noPython } from '../test-support/python.js';

const HAS_NOTIFY = spawnSync('systemd-notify', ['--version']).status === 0;
const SKIP_REAL = noPython('it holds the datagram socket')
  || (!HAS_NOTIFY && 'systemd-notify is missing (Debian: apt-get install systemd)');

// Prints "bound" once listening on argv[1] ("@name": abstract), then each datagram as a JSON string, one a line.
const LISTENER = `
import json, socket, sys
address = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\\0" + address[1:] if address.startswith("@") else address)
print('"bound"', flush=True)
while True:
    print(json.dumps(s.recv(4096).decode()), flush=True)
`;

/** A datagram listener on address: {next(): Promise<string> (the next datagram), stop()}. */
async function listen(address) {
  const child = spawn(PYTHON, ['-c', LISTENER, address], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    assert.ok(!done, 'the listener ended');
    return JSON.parse(value);
  };
  assert.equal(await next(), 'bound');
  return { next, stop: () => child.kill() };
}

/** The next datagram but systemd-notify's BARRIER=1 (its wait until the message was read). */
async function nextMessage(listener) {
  for (;;) {
    const message = await listener.next();
    if (message !== 'BARRIER=1') return message;
  }
}

describe('the watchdog interval', () => {
  const interval = (env, pid = 4242) => new SystemdNotifier({ env, pid }).watchdogIntervalS;

  it('is half of WATCHDOG_USEC, for this process or any when WATCHDOG_PID is unset', () => {
    assert.equal(interval({ WATCHDOG_USEC: '60000000' }), 30);
    assert.equal(interval({ WATCHDOG_USEC: '1000000', WATCHDOG_PID: '4242' }), 0.5);
  });

  it('is null for another process, without WATCHDOG_USEC, or with a WATCHDOG_USEC that is not digits', () => {
    assert.equal(interval({ WATCHDOG_USEC: '1000000', WATCHDOG_PID: '1' }), null);
    assert.equal(interval({}), null);
    assert.equal(interval({ WATCHDOG_USEC: '' }), null);
    assert.equal(interval({ WATCHDOG_USEC: '-5' }), null);
    assert.equal(interval({ WATCHDOG_USEC: '1e6' }), null);
  });

  it('defaults to this process\'s environment and pid', () => {
    const saved = { ...process.env };
    try {
      process.env.WATCHDOG_USEC = '2000000';
      process.env.WATCHDOG_PID = String(process.pid);
      assert.equal(new SystemdNotifier().watchdogIntervalS, 1);
    } finally {
      for (const key of ['WATCHDOG_USEC', 'WATCHDOG_PID']) {
        if (key in saved) process.env[key] = saved[key];
        else delete process.env[key];
      }
    }
  });
});

describe('notify', () => {
  it('without NOTIFY_SOCKET does nothing, not even run a command', async () => {
    const notifier = new SystemdNotifier({ env: {}, command: '/nonexistent/systemd-notify' });
    await notifier.notify('READY=1');
    assert.equal(notifier.unavailable, false);
  });

  it('without systemd-notify warns once and carries on', async () => {
    const lines = [];
    setupLogging('info', { write: (text) => lines.push(text) });
    const notifier = new SystemdNotifier({ env: { NOTIFY_SOCKET: '/run/nothing' }, command: '/nonexistent/systemd-notify' });
    await notifier.notify('READY=1');
    await notifier.notify('WATCHDOG=1');
    assert.equal(notifier.unavailable, true);
    assert.equal(lines.length, 1);
    assert.ok(lines[0].includes(' level=WARNING event=systemd_notify_unavailable '
      + 'error="spawn /nonexistent/systemd-notify ENOENT" '), lines[0]);
  });

  it('with systemd gone resolves all the same', { skip: HAS_NOTIFY ? false : 'systemd-notify is missing' }, async () => {
    const notifier = new SystemdNotifier({ env: { ...process.env, NOTIFY_SOCKET: '/nonexistent/notify.sock' } });
    await notifier.notify('STOPPING=1');
  });

  describe('through a socket', { skip: SKIP_REAL }, () => {
    it('sends process.md\'s datagrams, in order, without blocking the event loop', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'notify-'));
      const address = join(dir, 'notify.sock');
      const listener = await listen(address);
      try {
        const notifier = new SystemdNotifier({ env: { ...process.env, NOTIFY_SOCKET: address } });
        let turned = false;
        setImmediate(() => { turned = true; });
        const sent = [notifier.notify('READY=1'), notifier.notify('WATCHDOG=1\nSTATUS=spooled 3 frames'),
          notifier.notify('STOPPING=1')];
        assert.equal(turned, false); // nothing waited for yet
        await Promise.all(sent);
        assert.equal(turned, true);
        assert.equal(await nextMessage(listener), 'READY=1');
        assert.equal(await nextMessage(listener), 'WATCHDOG=1\nSTATUS=spooled 3 frames');
        assert.equal(await nextMessage(listener), 'STOPPING=1');
      } finally {
        listener.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('reaches an abstract socket (@name)', async () => {
      const address = `@telemetry-gateway-test-${process.pid}`;
      const listener = await listen(address);
      try {
        await new SystemdNotifier({ env: { ...process.env, NOTIFY_SOCKET: address } }).notify('READY=1');
        assert.equal(await nextMessage(listener), 'READY=1');
      } finally {
        listener.stop();
      }
    });
  });
});
