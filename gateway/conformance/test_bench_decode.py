"""Gateway conformance (process.md, "decode"): a board checked at the bench with `decode --port --config`. A board on
a real pseudo-terminal sends a good signed frame (before decode opens the port: the kernel keeps it), the next one
with a tag byte flipped, the first one again, and an unsigned frame under its keyed name. Every gateway under test,
side by side, prints the same lines written out here, each frame with its verdict (`accepted`, `bad_mac`,
`replay`, `unsigned`), and once the board is unplugged the same summary line, exit 0. Nothing is written: each
gateway runs in an empty folder that is also its HOME, and afterwards the config's spool path does not exist and
the folder holds only the config and the keys. No Cassandra."""

from __future__ import annotations

import os
import select
import subprocess
from pathlib import Path

from telemetry_board_sim import encode_frame

from telemetry_conformance import Board, gateways_under_test
from telemetry_conformance.signed_lines import signed_payload, t2_line

EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in this one test, side by side

KEY = bytes(range(16))  # PROTOCOL.md section 8's example key, node3's
TEMP_IN = 1  # metric id (PROTOCOL.md 6.3)
SIGNED_5 = '"signed":"0203010005000000E40C00016608","tag":"992C12F23E75"'
EXPECT = [
    '{"kind":"frame","format":"signed","source":"node3","seq":1,"t":null,"values":[["temp_in",21.5],["vbat",3.3]],'
    f'"counter":5,{SIGNED_5},"verdict":"accepted"}}',
    '{"kind":"frame","format":"signed","source":"node3","seq":2,"t":null,"values":[["temp_in",21.6],["vbat",3.3]],'
    '"counter":6,"signed":"0203020006000000E40C00017008","tag":"D85F061F9CB1","verdict":"bad_mac"}',
    '{"kind":"frame","format":"signed","source":"node3","seq":1,"t":null,"values":[["temp_in",21.5],["vbat",3.3]],'
    f'"counter":5,{SIGNED_5},"verdict":"replay"}}',
    '{"kind":"frame","format":"v1","source":"node3","seq":3,"t":null,"values":[["temp",21.5]],"verdict":"unsigned"}',
]
SUMMARY = ("lines=4 frames=4 accepted=1 bad_mac=1 replay=1 unsigned=1 unverified=0 status=0 rejected=0 "
           "end=gone")


def bench_lines() -> list[bytes]:
    good = t2_line(3, signed_payload(KEY, 3, 1, 5, [(TEMP_IN, 2150)], vbat_mv=3300))
    flipped = bytearray(signed_payload(KEY, 3, 2, 6, [(TEMP_IN, 2160)], vbat_mv=3300))
    flipped[-3] ^= 0x10  # a byte of the tag
    return [good, t2_line(3, bytes(flipped)), good, encode_frame("node3", 3, [("temp", 21.5)])]


def read_line(process: subprocess.Popen, timeout: float = 20) -> str:
    readable, _, _ = select.select([process.stdout], [], [], timeout)  # unbuffered: select sees every byte
    assert readable, f"no line from decode within {timeout} s"
    return process.stdout.readline().decode().rstrip("\n")


def bench(command: list[str], folder: Path, link: Path) -> tuple[list[str], str, Path]:
    """decode --port on a fresh pty: (stdout lines, stderr, the config's spool path)."""
    folder.mkdir()
    keys = folder / "keys"
    keys.write_text(f"node3 {KEY.hex()}\n")
    keys.chmod(0o600)
    spool = folder / "spool" / "telemetry.db"
    (folder / "config.toml").write_text(f'[signing]\nkeys_file = "{keys}"\n\n[spool]\npath = "{spool}"\n')
    env = {name: value for name, value in os.environ.items() if not name.startswith("TELEMETRY_")}
    env["HOME"] = str(folder)
    board = Board(link)
    lines = bench_lines()
    board.write(lines[0])
    process = subprocess.Popen([*command, "decode", "--port", str(link), "--config", "config.toml"], cwd=folder,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    try:
        out = [read_line(process)]  # the frame sent before the open
        board.write(b"".join(lines[1:]))
        out += [read_line(process) for _ in lines[1:]]
        board.unplug()
        rest, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err.decode(errors="replace")
    assert rest == b"", rest
    return out, err.decode(), spool


def test_decode_port_gives_every_gateway_the_same_verdicts_and_writes_nothing(tmp_path):
    seen = {}
    for name, command in gateways_under_test().items():
        link = tmp_path / f"tty-{name}"
        out, err, spool = bench(command, tmp_path / name, link)
        assert out == EXPECT, name
        prefix, _, summary = err.rstrip("\n").partition(" decode: ")
        assert "\n" not in err.rstrip("\n") and prefix, err
        assert summary == f"port={link} {SUMMARY}", name
        assert not spool.exists() and not spool.parent.exists(), name
        assert sorted(os.listdir(tmp_path / name)) == ["config.toml", "keys"], name
        seen[name] = (out, summary.split(" ", 1)[1])
    assert len(set(map(str, seen.values()))) == 1, seen
