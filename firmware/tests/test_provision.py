"""Keys over the USB cable (PROTOCOL.md 8.9): scripts/provision against the compiled signing sensor_node on simavr,
whose UART is a pty that resets the board when opened (sim_uno -R, as DTR does on an Uno); then radio-sim boots
the node from the EEPROM it left and every payload's tag is checked with the keys file's key. The script's own
checks run against a board played by the test on a pty."""

import hashlib
import hmac
import json
import os
import re
import select
import subprocess
import termios
import threading
import time
import tty
from pathlib import Path

import pytest

FIRMWARE = Path(__file__).resolve().parents[1]
SIM_UNO = FIRMWARE / "build" / "tests" / "sim_uno"
NODE_ELF = FIRMWARE / "build" / "sensor_node" / "sensor_node.elf"  # the default build: node 1, signing
PROVISION = FIRMWARE / "scripts" / "provision"
SIM_MS = 4000  # paced to the wall clock: the boot, the script's reset and answer, the first sample


@pytest.fixture(scope="module", autouse=True)
def built():
    subprocess.run(["make", "-C", str(FIRMWARE), "--no-print-directory", "sensor_node", "sim-runner", "radio-sim"],
                   check=True, capture_output=True, timeout=600)


def fingerprint(key: bytes) -> str:
    return hmac.new(key, b"telemetry counter fingerprint", hashlib.sha256).hexdigest()[:16]


def keys_in(path: Path) -> dict[str, bytes]:
    return {name: bytes.fromhex(hexkey) for name, hexkey in
            (line.split() for line in path.read_text().splitlines() if line and not line.startswith("#"))}


def write_keys(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def eeprom_image(path: Path, data: bytes) -> Path:
    """Intel HEX of data at EEPROM offset 0, as sim_uno -e reads it."""
    body = bytes([len(data), 0, 0, 0]) + data
    path.write_text(f":{body.hex().upper()}{(-sum(body)) & 0xFF:02X}\n:00000001FF\n")
    return path


def read_eeprom(path: Path) -> bytes:
    eeprom = bytearray(b"\xff" * 1024)
    for line in path.read_text().splitlines():
        record = bytes.fromhex(line[1:])
        if record[3] == 0:
            at = int.from_bytes(record[1:3], "big")
            eeprom[at:at + record[0]] = record[4:4 + record[0]]
    return bytes(eeprom)


class SimBoard:
    """sim_uno running the node for SIM_MS simulated ms at wall-clock pace, UART0 on a pty at `port`."""

    def __init__(self, tmp: Path, name: str, eeprom: Path | None = None):
        self.port, self.after = tmp / f"tty-{name}", tmp / f"{name}.eep"
        command = [str(SIM_UNO), "-p", str(self.port), "-R", "-r", "-m", str(SIM_MS), "-w", "60", "-o",
                   str(self.after), "-v", "3300", "-a", "0=1560", "-a", "1=1660", "-a", "2=900", "-a", "3=1450"]
        self.sim = subprocess.Popen(command + (["-e", str(eeprom)] if eeprom else []) + [str(NODE_ELF)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while not self.port.is_symlink() and time.monotonic() < deadline and self.sim.poll() is None:
            time.sleep(0.01)
        assert self.port.is_symlink(), "sim_uno did not create the pty link"

    def finish(self) -> tuple[bytes, str]:
        """The EEPROM and the summary once the run ends."""
        _, stderr = self.sim.communicate(timeout=60)
        assert self.sim.returncode == 0 and "state=time" in stderr, stderr
        return read_eeprom(self.after), stderr


def provision(port: Path, node: int, keys: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(PROVISION), str(port), str(node), "--keys", str(keys), "--no-flash", *extra],
                          capture_output=True, text=True, timeout=30)


def provisioned(tmp: Path, name: str, keys: Path, eeprom: Path | None) -> tuple[Path, bytes, str]:
    """Provisions node 1 on a simulated board; its EEPROM image, bytes and the script's stdout."""
    board = SimBoard(tmp, name, eeprom)
    result = provision(board.port, 1, keys)
    data, _ = board.finish()
    assert result.returncode == 0, result.stderr
    key = keys_in(keys)["node1"]
    assert key.hex() not in (result.stdout + result.stderr).lower()  # the key is never echoed
    assert data[:16] == key
    return board.after, data, result.stdout


def reservation(eeprom: bytes) -> int:
    return int.from_bytes(eeprom[16:20], "little")


def radio_payloads(tmp: Path, image: Path) -> list[bytes]:
    """Node 1's payloads as the base station printed them (T2 lines), node 1 booted from image."""
    trace = tmp / "trace.jsonl"
    subprocess.run([str(FIRMWARE / "scripts" / "radio-sim"), "--nodes", "1", "--sample-s", "2", "--seconds", "5",
                    "--eeprom", f"1:{image}", "--trace", str(trace)], check=True, capture_output=True, timeout=300)
    lines = [json.loads(line).get("uart", "") for line in trace.read_text().splitlines()]
    return [bytes.fromhex(line.split(",")[2].split("*")[0]) for line in lines if line.startswith("$T2,node1,")]


def test_a_board_gets_its_key_over_the_cable_and_keeps_its_counter_rising(tmp_path):
    keys = tmp_path / "keys.txt"
    image, first, out = provisioned(tmp_path, "new", keys, None)  # no keys file yet: the key is made
    assert keys.stat().st_mode & 0o777 == 0o600
    key = keys_in(keys)["node1"]
    assert out == f"node 1 provisioned, key fingerprint {fingerprint(key)} (a new key; its counter carries on)\n"
    assert reservation(first) == 256  # the sample after provisioning reserved the first block

    image, again, out = provisioned(tmp_path, "same", keys, image)
    assert "(the same key again;" in out
    assert reservation(again) >= reservation(first) + 256  # the reservation only rises: no counter is reused

    payloads = radio_payloads(tmp_path, image)
    assert payloads
    for payload in payloads:
        assert hmac.new(key, payload[:-6], hashlib.sha256).digest()[:6] == payload[-6:]  # signed with the file's key
    counters = [int.from_bytes(payload[4:8], "little") for payload in payloads]
    assert counters == list(range(reservation(again), reservation(again) + len(counters)))

    new_key = bytes(range(0x40, 0x50))
    write_keys(keys, f"node1 {new_key.hex()}\n")  # the node re-keyed: the gateway starts its counter afresh
    _, rekeyed, out = provisioned(tmp_path, "rekeyed", keys, image)
    assert out.startswith(f"node 1 provisioned, key fingerprint {fingerprint(new_key)} (a new key;")
    assert reservation(rekeyed) > reservation(again)


def talk(port: Path, lines: list[bytes]) -> list[str]:
    """Opens the board's port (which resets it), waits for its boot line, sends lines in its provisioning window
    and returns what it printed until its first sample."""
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    termios.tcflush(fd, termios.TCIFLUSH)  # what the board said before the reset
    received, buffer, deadline = [], b"", time.monotonic() + 10
    try:
        while time.monotonic() < deadline and not any(line.startswith("# no key") for line in received):
            if select.select([fd], [], [], 0.2)[0]:
                buffer += os.read(fd, 256)
            *complete, buffer = buffer.split(b"\n")
            received += [line.decode().strip() for line in complete]
            if lines and any("# boot sensor_node" in line for line in received):  # maybe after stale bytes
                os.write(fd, b"".join(lines))
                lines = []
    finally:
        os.close(fd)
    return received


def test_a_damaged_or_foreign_line_is_refused_and_writes_nothing(tmp_path):
    board = SimBoard(tmp_path, "refused")
    good = b"#provision 1 000102030405060708090a0b0c0d0e0f"
    crc = lambda body: b" %04X\n" % crc16(body)  # noqa: E731
    received = talk(board.port, [good.replace(b"0f", b"0e") + crc(good),  # a digit changed on the way
                                 b"#provision 2 000102030405060708090a0b0c0d0e0f" +
                                 crc(b"#provision 2 000102030405060708090a0b0c0d0e0f"),  # another node's key
                                 b"hello\n"])
    eeprom, summary = board.finish()
    assert [line for line in received if "provision" in line] == [
        "# provision refused node=1 reason=crc", "# provision refused node=1 reason=node_id",
        "# provision refused node=1 reason=format",
        "# no key: run firmware/scripts/provision PORT 1 --keys KEYS_FILE"], received
    assert eeprom == b"\xff" * 1024 and summary.rstrip().endswith("eeprom_writes=0")


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, written here from its definition (PROTOCOL.md section 1)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = (crc << 1 ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


class FakeBoard:
    """A board played on a pty: it prints `boot` until a line arrives (or stop()), records it, answers `answer`."""

    def __init__(self, boot: str, answer):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port, self.heard, self.stopped = Path(os.ttyname(self.slave)), [], threading.Event()
        self.player = threading.Thread(target=self.play, args=(boot, answer), daemon=True)
        self.player.start()

    def play(self, boot: str, answer) -> None:
        master, buffer = self.master, b""
        while b"\n" not in buffer and not self.stopped.is_set():
            os.write(master, boot.encode() + b"\r\n")  # until the script, past its flush, has read it
            if select.select([master], [], [], 0.1)[0]:
                buffer += os.read(master, 256)
        self.heard.append(buffer)
        if answer:
            os.write(master, (answer(buffer) if callable(answer) else answer).encode() + b"\r\n")

    def stop(self) -> list[bytes]:
        """What the board heard, once the script is done."""
        self.stopped.set()
        self.player.join(timeout=10)
        os.close(self.master)
        os.close(self.slave)
        return self.heard


BOOT = "# boot sensor_node node=3 channel=76 sample_s=60 payload=v2 key=none"


def test_the_script_sends_the_protocols_line_and_refuses_a_wrong_check_value(tmp_path):
    keys = write_keys(tmp_path / "keys.txt", "node3 000102030405060708090a0b0c0d0e0f\n")
    board = FakeBoard(BOOT, "# provisioned node=3 key_fingerprint=0000000000000000 key=new")
    result = provision(board.port, 3, keys)
    assert board.stop() == [b"#provision 3 000102030405060708090a0b0c0d0e0f 3150\n"]  # PROTOCOL.md 8.9's example
    assert result.returncode == 1 and "fingerprint 0000000000000000, not the keys file's 0ab3b852713a2854" in \
        result.stderr, result.stderr
    assert "000102030405060708090a0b0c0d0e0f" not in result.stdout + result.stderr


def test_a_missing_key_is_added_to_the_keys_file_which_keeps_the_rest(tmp_path):
    keys = write_keys(tmp_path / "keys.txt", "# farm keys\nnode2 00112233445566778899aabbccddeeff")  # no last \n

    def board_answer(line: bytes) -> str:  # a board that stores what it hears: the fingerprint of the key sent
        return f"# provisioned node=3 key_fingerprint={fingerprint(bytes.fromhex(line.split()[2].decode()))} key=new"
    board = FakeBoard(BOOT, board_answer)
    result = provision(board.port, 3, keys)
    heard = board.stop()
    assert result.returncode == 0, result.stderr
    made = heard[0].split()[2].decode()
    assert keys.read_text() == f"# farm keys\nnode2 00112233445566778899aabbccddeeff\nnode3 {made}\n"
    assert keys.stat().st_mode & 0o777 == 0o600 and [p.name for p in tmp_path.iterdir()] == ["keys.txt"]


def test_the_script_refuses_a_board_built_as_another_node(tmp_path):
    keys = write_keys(tmp_path / "keys.txt", "node3 000102030405060708090a0b0c0d0e0f\n")
    board = FakeBoard(BOOT.replace("node=3", "node=2"), None)
    result = provision(board.port, 3, keys)
    assert board.stop() == [b""]  # nothing sent
    assert result.returncode == 1 and "runs sensor_node node=2, not 3" in result.stderr, result.stderr


@pytest.mark.parametrize("text, mode, message", [
    ("node3 000102030405060708090a0b0c0d0e0f\n", 0o640, "may be read by group or others (mode 640): chmod 600"),
    ("# keys\nnode3 00010203\n", 0o600, "keys.txt line 2: not '<source> <32 hex digits>'"),
    ("node3 000102030405060708090a0b0c0d0e0f\nnode3 000102030405060708090a0b0c0d0e0f\n", 0o600, "line 2: node3 "
     "appears twice")], ids=["group_readable", "malformed", "twice"])
def test_the_script_refuses_a_bad_keys_file_before_touching_the_port(tmp_path, text, mode, message):
    keys = tmp_path / "keys.txt"
    keys.write_text(text)
    keys.chmod(mode)
    result = provision(tmp_path / "no-such-port", 3, keys)
    assert result.returncode == 1 and message in result.stderr, result.stderr
    assert "00010203" not in result.stderr and keys.read_text() == text


def test_the_script_answers_help_and_names_an_unknown_flag(tmp_path):
    helped = subprocess.run([str(PROVISION), "--help"], capture_output=True, text=True, timeout=30)
    assert helped.returncode == 0 and "usage: provision" in helped.stdout and "--no-flash" in helped.stdout
    refused = subprocess.run([str(PROVISION), "PORT", "3", "--keys", "k", "--bogus"], capture_output=True, text=True,
                             timeout=30)
    assert refused.returncode == 2 and "--bogus" in refused.stderr


def test_upload_without_a_key_says_the_node_will_send_nothing(tmp_path):
    def upload(*extra: str) -> str:
        return subprocess.run(["make", "-s", "-C", str(FIRMWARE / "sensor_node"), "upload",
                               f"PORT={tmp_path / 'ttyUSB9'}", "AVRDUDE=/bin/false", *extra],
                              capture_output=True, text=True, timeout=300).stderr

    warned = upload()
    assert "WARNING: flashing the signing sensor node WITHOUT a key: node1 will send NOTHING" in warned, warned
    assert f"firmware/scripts/provision {tmp_path / 'ttyUSB9'} 1 --keys keys.txt --no-flash" in warned
    assert "WARNING" not in upload("PROVISIONING=serial")
