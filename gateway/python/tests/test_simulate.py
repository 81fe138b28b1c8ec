"""telemetry-gateway simulate: the boards' lines (pure) and the pseudo-terminal a gateway opens like a serial port."""

import subprocess
import sys
import time

import serial

from telemetry_gateway.frame import Frame, Reject, decode_line
from telemetry_gateway.simulate import SimulationSpec, simulated_lines

NOW = 1_780_000_000_000
DAY = 86_400_000


def test_backfill_covers_the_days_with_explicit_time_and_per_source_seq():
    spec = SimulationSpec(sources=2, backfill_days=2, interval_s=3600)
    frames = [decode_line(line) for line in simulated_lines(spec, NOW)]
    assert len(frames) == 2 * 48 and all(isinstance(f, Frame) for f in frames)
    assert {f.source for f in frames} == {"sim1", "sim2"}
    assert min(f.t for f in frames) == NOW - 2 * DAY and max(f.t for f in frames) == NOW - 3_600_000
    assert [f.seq for f in frames if f.source == "sim2"] == list(range(48))
    assert {k for f in frames for k, _ in f.values} == {"temp_in", "temp_out", "humidity", "light"}


def test_every_nth_line_is_damaged_and_rejected():
    lines = list(simulated_lines(SimulationSpec(count=30, corrupt_every=10), NOW))
    verdicts = [decode_line(line) for line in lines]
    assert [i for i, v in enumerate(verdicts) if isinstance(v, Reject)] == [9, 19, 29]
    assert all(v.reason in ("bad_crc", "bad_syntax") for v in verdicts if isinstance(v, Reject))


def test_live_frames_carry_no_time_and_the_output_is_reproducible():
    spec = SimulationSpec(sources=3, count=6, seed=4)
    lines = list(simulated_lines(spec, NOW))
    assert lines == list(simulated_lines(spec, NOW))
    assert all(decode_line(line).t is None for line in lines)


def test_pty_mode_is_a_serial_port(tmp_path):
    link = tmp_path / "ttyUSB-sim"
    board = subprocess.Popen([sys.executable, "-m", "telemetry_gateway", "simulate", "--pty", str(link),
                              "--sources", "2", "--rate", "50", "--count", "40"], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not link.exists():
            assert time.monotonic() < deadline, "the pty link never appeared"
            time.sleep(0.02)
        port = serial.Serial(str(link), 115200, timeout=2)
        frames = []
        while len(frames) < 20:
            line = port.readline()
            assert line, "no line within 2 s"
            result = decode_line(line)
            if isinstance(result, Frame):  # the first line may be cut by the open
                frames.append(result)
        port.close()
        assert {f.source for f in frames} == {"sim1", "sim2"}
        assert board.wait(timeout=10) == 0
        assert not link.exists()  # removed on exit, like a device that goes away
    finally:
        if board.poll() is None:
            board.kill()
