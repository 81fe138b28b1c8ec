"""telemetry-board-sim: the boards' lines (pure), the command's file output, and the pseudo-terminal a gateway
opens like a serial port. Lines are checked against PROTOCOL.md's text, not with any gateway's decoder."""

import binascii
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial

from telemetry_board_sim.simulation import SimulationSpec, simulated_lines

NOW = 1_780_000_000_000
DAY = 86_400_000
BOARD_SIM = [sys.executable, "-m", "telemetry_board_sim"]
_FRAME = re.compile(rb"\$(T1,[^*]*)\*([0-9A-F]{4})\r?\n")
_CSV = re.compile(rb"(0|[1-9][0-9]?|100),(-?[0-9]+\.[0-9]{2})\r\n")


def frame(line):
    """(source, seq, t, {key: value text}) of an intact v1 frame line; None when its syntax or CRC is broken."""
    match = _FRAME.fullmatch(line)
    if match is None or binascii.crc_hqx(match[1], 0xFFFF) != int(match[2], 16):
        return None
    _, source, seq, *pairs = match[1].decode("ascii").split(",")
    values = dict(pair.split("=", 1) for pair in pairs)
    t = values.pop("t", None)
    return source, int(seq), None if t is None else int(t), values


def test_backfill_covers_the_days_with_explicit_time_and_per_source_seq():
    spec = SimulationSpec(sources=2, backfill_days=2, interval_s=3600)
    frames = [frame(line) for line in simulated_lines(spec, NOW)]
    assert len(frames) == 2 * 48 and None not in frames
    assert {source for source, *_ in frames} == {"sim1", "sim2"}
    assert min(t for _, _, t, _ in frames) == NOW - 2 * DAY and max(t for _, _, t, _ in frames) == NOW - 3_600_000
    assert [seq for source, seq, _, _ in frames if source == "sim2"] == list(range(48))
    assert {k for *_, values in frames for k in values} == {"temp_in", "temp_out", "humidity", "light"}


def test_live_frames_carry_no_time_and_the_output_is_reproducible():
    spec = SimulationSpec(sources=3, count=6, seed=4)
    lines = list(simulated_lines(spec, NOW))
    assert lines == list(simulated_lines(spec, NOW))
    assert lines != list(simulated_lines(SimulationSpec(sources=3, count=6, seed=5), NOW))
    frames = [frame(line) for line in lines]
    assert [(source, seq, t) for source, seq, t, _ in frames] == [
        ("sim1", 0, None), ("sim2", 0, None), ("sim3", 0, None), ("sim1", 1, None), ("sim2", 1, None),
        ("sim3", 1, None)]


def test_seq_wraps_after_65535():
    lines = list(simulated_lines(SimulationSpec(count=65538), NOW))
    assert [frame(line)[1] for line in lines[-3:]] == [65535, 0, 1]


@pytest.mark.parametrize("format", ["v1", "csv"])
def test_every_nth_line_is_damaged_so_that_it_cannot_be_taken_for_a_reading(format):
    spec = SimulationSpec(count=30, corrupt_every=10, format=format)
    lines = list(simulated_lines(spec, NOW))
    intact = frame if format == "v1" else _CSV.fullmatch
    assert [i for i, line in enumerate(lines) if not intact(line)] == [9, 19, 29]
    assert all(lines[i].endswith(b"\n") for i in (9, 19, 29))  # the ending is left alone: one line stays one
    # Up to the first damage the generator has drawn the same numbers: that line is the clean one, one byte changed.
    clean = list(simulated_lines(SimulationSpec(count=10, format=format), NOW))
    assert lines[:9] == clean[:9]
    assert len(lines[9]) == len(clean[9]) and sum(a != b for a, b in zip(lines[9], clean[9])) == 1


def test_csv_lines_are_the_room_boards():
    lines = list(simulated_lines(SimulationSpec(count=20, format="csv"), NOW))
    assert len(lines) == 20 and all(_CSV.fullmatch(line) for line in lines)
    assert lines == list(simulated_lines(SimulationSpec(count=20, format="csv"), NOW))


@pytest.mark.parametrize("kwargs", [dict(format="csv", sources=2), dict(format="csv", backfill_days=1),
                                    dict(format="json")])
def test_specs_the_format_cannot_express_are_refused(kwargs):
    with pytest.raises(ValueError):
        SimulationSpec(**kwargs)


def run_board_sim(*args):
    return subprocess.run([*BOARD_SIM, *map(str, args)], capture_output=True, timeout=60)


def test_the_command_writes_a_backfill_file(tmp_path):
    out = tmp_path / "week.txt"
    result = run_board_sim("--output", out, "--sources", 3, "--days", 1, "--interval", 3600)
    assert result.returncode == 0, result.stderr
    frames = [frame(line) for line in out.read_bytes().splitlines(keepends=True)]
    assert len(frames) == 3 * 24 and None not in frames
    now_ms = time.time() * 1000
    assert all(now_ms - DAY - 60_000 <= t <= now_ms for _, _, t, _ in frames)
    assert b"wrote 72 lines" in result.stderr


def test_the_command_paces_csv_lines_to_stdout():
    started = time.monotonic()
    result = run_board_sim("--format", "csv", "--count", 4, "--rate", 10)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started >= 0.3  # 4 lines at 10/s: the last one 0.3 s after the first
    lines = result.stdout.splitlines(keepends=True)
    assert len(lines) == 4 and all(_CSV.fullmatch(line) for line in lines)


@pytest.mark.parametrize("args", [("--format", "csv", "--sources", "2"), ("--format", "csv", "--days", "1"),
                                  ("--format", "json"), ("--pty", "/tmp/x", "--output", "-")])
def test_the_command_refuses_impossible_arguments(args):
    result = run_board_sim(*args)
    assert result.returncode == 2 and b"telemetry-board-sim: error:" in result.stderr and not result.stdout


@pytest.mark.parametrize("format", ["v1", "csv"])
def test_pty_mode_is_a_serial_port(tmp_path, format):
    link = tmp_path / "ttyUSB-sim"
    sources = ["--sources", "2"] if format == "v1" else []
    board = subprocess.Popen([*BOARD_SIM, "--pty", str(link), "--format", format, *sources, "--rate", "50",
                              "--count", "40"], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not link.exists():
            assert time.monotonic() < deadline, "the pty link never appeared"
            time.sleep(0.02)
        port = serial.Serial(str(link), 9600, timeout=2)
        lines = []
        while len(lines) < 20:
            line = port.readline()
            assert line, "no line within 2 s"
            if _FRAME.fullmatch(line) or _CSV.fullmatch(line):  # the first line may be cut by the open
                lines.append(line)
        port.close()
        if format == "v1":
            assert {frame(line)[0] for line in lines} == {"sim1", "sim2"}
        else:
            assert all(_CSV.fullmatch(line) for line in lines)
        assert board.wait(timeout=10) == 0
        assert not link.exists()  # removed on exit, like a device that goes away
    finally:
        if board.poll() is None:
            board.kill()
