"""The compiled serial_node on simavr, its UART0 exposed as a pseudo-terminal by sim_uno -p, read the way the
gateway reads /dev/ttyUSB0; each frame must be, byte for byte, what the reference encoder written from
firmware/protocol/PROTOCOL.md makes of its fields."""

import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from telemetry_board_sim import encode_frame

from sim_expect import ntc_celsius

FIRMWARE = Path(__file__).resolve().parents[1]

SIM_UNO = FIRMWARE / "build" / "tests" / "sim_uno"
ELF = FIRMWARE / "build" / "serial_node" / "serial_node.elf"
VCC_MV = 5000
TEMP_MV, LIGHT_MV = 2000, 3500  # A0: NTC divider (~30.4 °C), A1: photoresistor divider (70 %)


def read_lines(fd: int, want_frames: int, timeout_s: float) -> list[bytes]:
    """Reads whole lines from the pty until `want_frames` lines start with '$' or the timeout passes."""
    deadline = time.monotonic() + timeout_s
    buffer, lines = b"", []
    while sum(line.startswith(b"$") for line in lines) < want_frames and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        buffer += os.read(fd, 4096)
        *complete, buffer = buffer.split(b"\n")
        lines += [line + b"\n" for line in complete]
    return lines


@dataclass
class FrameFields:
    source: str
    seq: int
    values: dict[str, float]


def frame_fields(line: bytes) -> FrameFields:
    """A v1 frame's fields (no explicit t), after checking the line is exactly their reference encoding."""
    version, source, seq, *pairs = line[1:line.rindex(b"*")].decode("ascii").split(",")
    assert version == "T1" and not any(pair.startswith("t=") for pair in pairs), line
    texts = [tuple(pair.split("=", 1)) for pair in pairs]
    assert line == encode_frame(source, int(seq), texts), line
    return FrameFields(source, int(seq), {key: float(text) for key, text in texts})


def test_frames_from_the_simulated_serial_port_decode_to_the_injected_values(tmp_path):
    subprocess.run(["make", "-C", str(FIRMWARE), "--no-print-directory", "serial_node", "sim-runner"],
                   check=True, capture_output=True, timeout=300)
    port = tmp_path / "ttyUSB-sim"
    # -m bounds the run in simulated time (16 s: frames at 0, 5, 10, 15 s); -w is only a hang guard.
    sim = subprocess.Popen([str(SIM_UNO), "-p", str(port), "-m", "60000", "-w", "90", "-a", f"0={TEMP_MV}",
                            "-a", f"1={LIGHT_MV}", str(ELF)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not port.is_symlink() and time.monotonic() < deadline and sim.poll() is None:
            time.sleep(0.01)
        assert port.is_symlink(), "sim_uno did not create the pty link"
        fd = os.open(port, os.O_RDONLY | os.O_NOCTTY)
        try:
            lines = read_lines(fd, want_frames=3, timeout_s=60)
        finally:
            os.close(fd)
    finally:
        sim.send_signal(signal.SIGTERM)
        _, stderr = sim.communicate(timeout=30)
    assert sim.returncode == 0, stderr
    assert "state=signal" in stderr
    assert not port.exists(), "sim_uno leaves no stale link behind"

    assert b"# boot serial_node source=room sample_s=5\r\n" in lines, lines  # a status line (PROTOCOL.md 2)
    frames = [frame_fields(line) for line in lines if line.startswith(b"$")]
    assert len(frames) >= 3, lines
    count = TEMP_MV * 1023 / VCC_MV
    for previous, frame in zip(frames, frames[1:]):
        assert frame.seq == previous.seq + 1
    assert frames[0].seq == 0
    for frame in frames:
        assert frame.source == "room"
        values = frame.values
        assert list(values) == ["temp", "light"]
        # One ADC count either way: the converter model's rounding is not part of the contract.
        assert ntc_celsius(count + 1.5) <= values["temp"] <= ntc_celsius(count - 1.5)
        assert abs(values["light"] - LIGHT_MV * 100 / VCC_MV) <= 1
