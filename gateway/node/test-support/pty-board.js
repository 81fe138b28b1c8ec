// A sensor board on a pseudo-terminal, held by a Python helper as the conformance harness's Board does
// (os.openpty, the slave's path linked at the test's path, bytes written from the master, unplug = unlink and
// close both ends): Node has no pseudo-terminals of its own. test-support/python.js says which Python.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { PYTHON } from './python.js';

// One board on a pty: commands on stdin, one "ok ..." line back each.
const BOARD = String.raw`
import fcntl, os, select, struct, sys, termios, tty
link = sys.argv[1]
master = slave = None
for line in sys.stdin:
    command, _, argument = line.strip().partition(" ")
    answer = ""
    if command == "plug":
        master, slave = os.openpty()
        tty.setraw(slave)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.ttyname(slave), link)
    elif command == "write":
        view = memoryview(bytes.fromhex(argument))
        while view:
            select.select([], [master], [], 10)
            view = view[os.write(master, view):]
    elif command == "unplug":
        os.unlink(link)
        os.close(slave)
        os.close(master)
    elif command == "pending":  # bytes waiting in the kernel, unread by the gateway
        answer = str(struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0])
    print("ok", answer, flush=True)
`;

export class PtyBoard {
  constructor(link) {
    this.process = spawn(PYTHON, ['-c', BOARD, link], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.answers = [];
    createInterface({ input: this.process.stdout }).on('line', (line) => this.answers.shift()?.(line));
  }

  command(text) {
    return new Promise((resolve) => {
      this.answers.push((line) => resolve(line.slice(3)));
      this.process.stdin.write(`${text}\n`);
    });
  }

  plug() { return this.command('plug'); }
  unplug() { return this.command('unplug'); }
  write(text) { return this.command(`write ${Buffer.from(text, 'latin1').toString('hex')}`); }
  async pending() { return Number(await this.command('pending')); }

  close() {
    this.process.stdin.end();
    return new Promise((resolve) => { this.process.on('exit', resolve); });
  }
}
