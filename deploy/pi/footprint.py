"""deploy/pi/footprint: what a gateway costs a Raspberry Pi in a greenhouse. Simulated boards (telemetry-board-sim,
the conformance kit's boards_on_pty) send 6 sources' frames at 1 frame/s each on a pty; the gateway (the conformance
kit's GatewayUnderTest, config and all) reads it as a serial port and writes to a real Cassandra. After a
warm-up, it measures from /proc/PID: CPU (user + system, % of one core, from stat), resident memory (VmRSS, sampled
every second) and bytes written to disk per frame accepted, for each gateway and each spool fsync policy. Prints
figures and the targets at the default policy (deferred): at most 2% of one core, at most 100 B written per frame.
Asserts nothing.

Bytes written to disk: write_bytes of /proc/PID/io, the gateway process with all its threads (the Node gateway's
systemd-notify child runs only under systemd). The kernel counts a 4 KiB page each time the process makes a clean
page of a file on disk dirty: by write() or through a shared mapping (SQLite's -shm), whether or not it is synced;
a page made dirty again before the kernel wrote it back counts once. That is the spool, its WAL, -shm and reserve:
what the SD card is given, less the file system's own journal and metadata (written by the kernel, not the
process). The gateway's log (its stdout and stderr) goes to a tmpfs here, so it is not in that figure: on a Pi
journald writes it, counted apart as "log" (bytes of log lines per frame). "committed" is how many frames went
into the spool file (telemetry_gateway_spool_frames_committed_total): under deferred, 0 when Cassandra kept up.
A second table gives the bytes per frame over the 10 s steps in which Cassandra kept up (no frame committed in the
step nor in the one before): what a healthy link writes, when Cassandra was slow for part of the run (a shared test
machine).

Cassandra: the hosts of TELEMETRY_CASSANDRA_HOSTS (default 127.0.0.1) with the schema applied to --keyspace.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from telemetry_conformance import GATEWAY_COMMANDS, ROOT, GatewayUnderTest, boards_on_pty
from telemetry_conformance.process_usage import cpu_seconds

POLICIES = ("deferred", "batch", "interval")  # gateway/contract/config.md, spool.fsync; the first is the default
TARGET_CPU_PERCENT = 2.0
TARGET_BYTES_PER_FRAME = 100
STEP_S = 10  # the counters are read this often, to tell the steps in which Cassandra kept up


@dataclass
class Footprint:
    gateway: str
    policy: str
    seconds: float
    cpu_percent: float
    rss_mb_mean: float
    rss_mb_max: float
    frames: int  # accepted by the gateway while measured
    frames_written: int  # acknowledged by Cassandra while measured
    frames_committed: int  # into the spool file while measured
    bytes_written: int
    log_bytes: int  # of log lines, not on the disk here (journald's on a Pi)
    # Over the STEP_S steps in which, and in the step before which, no frame was committed: Cassandra kept up.
    healthy_seconds: float
    healthy_frames: int
    healthy_bytes: int

    @property
    def bytes_per_frame(self) -> float:
        return self.bytes_written / self.frames if self.frames else float("nan")

    @property
    def healthy_bytes_per_frame(self) -> float:
        return self.healthy_bytes / self.healthy_frames if self.healthy_frames else float("nan")


def write_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    raise RuntimeError(f"no write_bytes in /proc/{pid}/io")


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def measure(name: str, policy: str, args: argparse.Namespace, work: Path) -> Footprint:
    tmp = Path(tempfile.mkdtemp(prefix=f"{name}-{policy}-", dir=work))
    link = tmp / "ttyUSB-boards"
    board = boards_on_pty(link, frames=0, sources=args.sources, rate=args.sources * args.rate)
    # GatewayUnderTest starts the command GATEWAY_COMMAND names, as in the conformance suite.
    os.environ["GATEWAY_COMMAND"] = shlex.join(GATEWAY_COMMANDS[name])
    hosts = os.environ.get("TELEMETRY_CASSANDRA_HOSTS", "127.0.0.1").split(",")
    gateway = GatewayUnderTest.configure(tmp, [link], args.keyspace, hosts, fsync=policy)
    logs = Path(tempfile.mkdtemp(prefix=f"footprint-{name}-{policy}-", dir="/dev/shm"))
    gateway.log_path = logs / "gateway.log"  # on a tmpfs: not in write_bytes (journald's writes on a Pi)
    try:
        gateway.start()
        pid = gateway.process.pid
        time.sleep(args.warm_up)
        accepted = lambda: int(gateway.metric("telemetry_gateway_frames_accepted_total", format="v1"))  # noqa: E731
        written = lambda: int(gateway.metric("telemetry_gateway_frames_written_total"))  # noqa: E731
        committed = lambda: int(gateway.metric("telemetry_gateway_spool_frames_committed_total"))  # noqa: E731
        log_size = lambda: gateway.log_path.stat().st_size  # noqa: E731
        t0, cpu0, io0, frames0, written0 = time.monotonic(), cpu_seconds(pid), write_bytes(pid), accepted(), written()
        committed0, log0 = committed(), log_size()
        rss, steps, next_step = [], [(t0, io0, frames0, committed0)], t0 + STEP_S
        while time.monotonic() - t0 < args.seconds:
            rss.append(rss_mb(pid))
            time.sleep(1)
            if time.monotonic() >= next_step:
                steps.append((time.monotonic(), write_bytes(pid), accepted(), committed()))
                next_step += STEP_S
        t1, cpu1, io1, frames1, written1 = time.monotonic(), cpu_seconds(pid), write_bytes(pid), accepted(), written()
        committed1, log1 = committed(), log_size()
        steps.append((t1, io1, frames1, committed1))
        healthy = [(b[0] - a[0], b[2] - a[2], b[1] - a[1]) for before, a, b in zip([None, *steps], steps, steps[1:])
                   if b[3] == a[3] and (before is None or a[3] == before[3])]
    finally:
        if gateway.process is not None and gateway.process.poll() is None:
            gateway.process.send_signal(signal.SIGTERM)
            try:
                gateway.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                gateway.kill()
        board.terminate()
        try:
            board.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a board between two slow frames
            board.kill()
            board.wait()
        (tmp / "gateway.log").write_bytes(gateway.log_path.read_bytes())  # kept with the run's spool
        shutil.rmtree(logs)
    return Footprint(name, policy, t1 - t0, 100 * (cpu1 - cpu0) / (t1 - t0), sum(rss) / len(rss), max(rss),
                     frames1 - frames0, written1 - written0, committed1 - committed0, io1 - io0, log1 - log0,
                     *(sum(column) for column in zip((0, 0, 0), *healthy)))


def print_figures(results: list[Footprint], args: argparse.Namespace) -> None:
    hosts = os.environ.get("TELEMETRY_CASSANDRA_HOSTS", "127.0.0.1")
    print(f"\nPi footprint: {args.sources} sources x {args.rate:g} frame/s on one pty, {args.seconds:g} s measured "
          f"after {args.warm_up:g} s of warm-up, Cassandra {hosts} keyspace {args.keyspace}\n")
    print("| gateway | spool.fsync | CPU, % of one core | RSS MB, mean / max | written to disk per frame "
          "| written to disk per second | frames accepted | frames written to Cassandra | frames committed "
          "| log per frame |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        log = r.log_bytes / r.frames if r.frames else float("nan")
        print(f"| {r.gateway} | {r.policy} | {r.cpu_percent:.2f} | {r.rss_mb_mean:.1f} / {r.rss_mb_max:.1f} "
              f"| {r.bytes_per_frame:,.0f} B | {r.bytes_written / r.seconds:,.0f} B | {r.frames} "
              f"| {r.frames_written} | {r.frames_committed} | {log:,.1f} B |")
    print("\nwritten to disk: write_bytes of /proc/PID/io, pages of files on disk the gateway process made dirty "
          "(spool, WAL, -shm); log: bytes of log lines (on a tmpfs here; journald's on a Pi)")
    print(f"\nWhile Cassandra kept up ({STEP_S} s steps in which, and in the step before which, no frame was "
          "committed to the spool file):\n")
    print("| gateway | spool.fsync | seconds | frames accepted | written to disk per frame |")
    print("| --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| {r.gateway} | {r.policy} | {r.healthy_seconds:.0f} of {r.seconds:.0f} | {r.healthy_frames} "
              f"| {r.healthy_bytes_per_frame:,.0f} B |")
    print(f"\nTargets at the default policy ({POLICIES[0]}): CPU at most {TARGET_CPU_PERCENT:g}% of one core, at most "
          f"{TARGET_BYTES_PER_FRAME} B written per frame")
    for r in results:
        if r.policy == POLICIES[0] and r.frames:
            cpu = "met" if r.cpu_percent <= TARGET_CPU_PERCENT else "MISSED"
            disk = "met" if r.bytes_per_frame <= TARGET_BYTES_PER_FRAME else "MISSED"
            print(f"  {r.gateway}: CPU {cpu} ({r.cpu_percent:.2f}%), bytes per frame {disk} "
                  f"({r.bytes_per_frame:,.0f} B)")
    for r in results:
        if r.policy == POLICIES[0] and r.frames_committed:
            print(f"  note: {r.gateway}/{r.policy} committed {r.frames_committed} frames to the spool file: Cassandra "
                  "did not acknowledge them in time (a slow or failing moment), and they are in the figure")
        if r.frames_written < r.frames * 0.9:
            print(f"  note: {r.gateway}/{r.policy} wrote {r.frames_written} of {r.frames} frames to Cassandra: is it "
                  "reachable, with the schema applied?")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="deploy/pi/footprint", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1 minute per gateway and policy instead of 10 (for CI)")
    p.add_argument("--seconds", type=float, help="measured seconds per gateway and policy (default 600, quick 60)")
    p.add_argument("--warm-up", type=float, default=10, help="seconds before measuring (default %(default)s)")
    p.add_argument("--gateways", default=",".join(GATEWAY_COMMANDS), help="default: %(default)s")
    p.add_argument("--policies", default=",".join(POLICIES), help="spool.fsync policies (default: %(default)s)")
    p.add_argument("--sources", type=int, default=6, help="simulated boards (default %(default)s)")
    p.add_argument("--rate", type=float, default=1.0, help="frames/s per source (default %(default)s)")
    p.add_argument("--keyspace", default="telemetry", help="default: %(default)s")
    args = p.parse_args()
    args.seconds = args.seconds or (60 if args.quick else 600)
    for name in args.gateways.split(","):
        if name not in GATEWAY_COMMANDS:
            p.error(f"no gateway named {name!r}; known: {', '.join(GATEWAY_COMMANDS)}")
    for policy in args.policies.split(","):
        if policy not in POLICIES:
            p.error(f"no fsync policy {policy!r}; known: {', '.join(POLICIES)}")
    return args


def main() -> None:
    args = parse_args()
    work = ROOT / ".state" / "pi-footprint"  # on disk, not tmpfs: write_bytes counts what reaches storage
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for policy in args.policies.split(","):
        for name in args.gateways.split(","):
            print(f"footprint: {name}, fsync {policy}: {args.warm_up:g} + {args.seconds:g} s", flush=True)
            results.append(measure(name, policy, args, work))
    print_figures(results, args)


if __name__ == "__main__":
    main()
