"""decode's verdicts (decode_verdicts.py) and decode --port on a real pseudo-terminal (decode_port.py):
gateway/contract/process.md, "decode". The signed lines were made with an independent HMAC-SHA256 under
PROTOCOL.md section 8's example key (node3)."""

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import tty

import pytest

from telemetry_gateway.decode_command import main
from telemetry_gateway.decode_verdicts import DecodeJudge
from telemetry_gateway.frame import decode_line
from telemetry_gateway.signing import SigningPolicy

KEY = bytes(range(16))
C5 = b"$T2,node3,020301000500000000000001D700A5B332E635C7*9E73"
C6 = b"$T2,node3,020302000600000000000001D800DBA919C3AABB*F494"
C6_FLIPPED = b"$T2,node3,020302000600000000000001D800DBA919C3AABA*C4F7"  # the tag's last bit flipped
C7 = b"$T2,node3,020303000700000000000001D800CB8F8276C587*8E8F"
UNSIGNED = b"$T1,node3,3,temp=21.5*E488"
OTHER_UNSIGNED = b"$T1,room,1,temp=20*018B"
BENCH = [C5, C6_FLIPPED, C5, UNSIGNED]  # good, a flipped tag, a replay, unsigned
BENCH_VERDICTS = ["accepted", "bad_mac", "replay", "unsigned"]


def verdicts(judge: DecodeJudge, lines) -> list:
    return [judge.judge(decode_line(line)) for line in lines]


def test_a_verdict_per_frame_from_the_counters_given():
    judge = DecodeJudge(SigningPolicy({"node3": KEY}), counters={"node3": 5})
    assert verdicts(judge, [C5, C6_FLIPPED, C6, C6, C7, UNSIGNED, OTHER_UNSIGNED, b"#boot", b"noise"]) == [
        "replay", "bad_mac", "accepted", "replay", "accepted", "unsigned", "unsigned", None, None]
    assert judge.summary("/dev/ttyUSB0", "gone") == (
        "port=/dev/ttyUSB0 lines=9 frames=7 accepted=2 bad_mac=1 replay=2 unsigned=2 unverified=0 status=1 "
        "rejected=1 end=gone")


def test_a_run_starts_with_no_counters_and_the_config_settings_apply():
    judge = DecodeJudge(SigningPolicy({"node3": KEY}, frozenset({"room"})))
    assert verdicts(judge, BENCH + [OTHER_UNSIGNED]) == BENCH_VERDICTS + ["accepted"]
    # Keys of another board only: node3's signed frames have no key.
    assert verdicts(DecodeJudge(SigningPolicy({"room": KEY})), [C5, UNSIGNED]) == ["bad_mac", "unsigned"]


def test_without_keys_no_verdict_and_frames_are_counted_unverified():
    judge = DecodeJudge(None)
    assert verdicts(judge, BENCH) == [None] * 4
    assert judge.counts["unverified"] == 4 and judge.counts["accepted"] == 0


def keys_file(tmp_path, mode=0o600):
    path = tmp_path / "keys"
    path.write_text(f"node3 {KEY.hex()}\n")
    path.chmod(mode)
    return path


def run_main(args, data=b""):
    out, err = io.StringIO(), io.StringIO()
    code = main(args, stdin=io.BytesIO(data), stdout=out, stderr=err)
    return code, out.getvalue().splitlines(), err.getvalue()


def test_stdin_with_keys_gives_each_frame_its_verdict_last(tmp_path):
    code, out, err = run_main(["--keys", str(keys_file(tmp_path))], b"\n".join(BENCH + [b"#boot"]) + b"\n")
    assert code == 0 and err == ""
    assert [json.loads(text).get("verdict") for text in out] == BENCH_VERDICTS + [None]
    assert out[3] == ('{"kind":"frame","format":"v1","source":"node3","seq":3,"t":null,"values":[["temp",21.5]],'
                      '"verdict":"unsigned"}')
    code, out, _ = run_main(["--config", str(write_config(tmp_path, keys_file(tmp_path)))], C5 + b"\n")
    assert code == 0 and json.loads(out[0])["verdict"] == "accepted"


def write_config(tmp_path, keys):
    path = tmp_path / "config.toml"
    path.write_text(f'[signing]\nkeys_file = "{keys}"\n[spool]\npath = "{tmp_path}/spool.db"\n')
    return path


def test_a_keys_file_others_may_read_is_a_config_error(tmp_path):
    code, out, err = run_main(["--keys", str(keys_file(tmp_path, 0o644))], C5 + b"\n")
    assert (code, out) == (2, [])
    assert err.startswith("telemetry-gateway: config error at signing.keys_file [unreadable]: ")
    assert KEY.hex() not in err


USAGE_ERRORS = [(["--count", "2"], "--count"), (["--seconds", "1"], "--seconds"),
                (["--port", "/dev/null", "--count", "0"], "--count"), (["--port", "x", "--count", "1.5"], "--count"),
                (["--port", "/dev/null", "--seconds", "nan"], "--seconds"), (["--bogus"], "--bogus")]


@pytest.mark.parametrize("args, word", USAGE_ERRORS)
def test_usage_errors_name_the_option(args, word, capsys):
    assert main(args) == 2
    assert word in capsys.readouterr().err


class Pty:
    """A board on a real pseudo-terminal: what the test writes to the master, decode reads from the path."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)

    def unplug(self):
        os.close(self.slave)
        os.close(self.master)


def test_a_port_read_until_it_goes_away_keeping_what_the_kernel_held(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    board = Pty()
    os.write(board.master, C5 + b"\r\n")  # sent before decode opens the port: kept, not flushed

    def the_rest():
        time.sleep(0.3)
        os.write(board.master, b"\r\n".join(BENCH[1:]) + b"\r\n" + b"x" * 300 + b"\nhalf a li")
        time.sleep(0.3)
        board.unplug()

    writer = threading.Thread(target=the_rest)
    writer.start()
    code, out, err = run_main(["--port", f"{board.path}@9600", "--keys", str(keys_file(tmp_path))])
    writer.join()
    assert code == 0
    assert [json.loads(text).get("verdict", json.loads(text).get("reason")) for text in out] == (
        BENCH_VERDICTS + ["too_long", "partial_line"])
    assert err == (f"telemetry-gateway decode: port={board.path} lines=6 frames=4 accepted=1 bad_mac=1 replay=1 "
                   "unsigned=1 unverified=0 status=0 rejected=2 end=gone\n")
    assert sorted(os.listdir(tmp_path)) == ["keys"]  # nothing written


def test_count_ends_at_that_many_lines_and_a_missing_port_exits_1(tmp_path):
    board = Pty()
    os.write(board.master, b"\n".join(BENCH) + b"\n")
    code, out, err = run_main(["--port", board.path, "--count", "3"])
    board.unplug()
    assert code == 0 and len(out) == 3 and "verdict" not in out[0]
    assert err.endswith(" lines=3 frames=3 accepted=0 bad_mac=0 replay=0 unsigned=0 unverified=3 status=0 "
                        "rejected=0 end=count\n")
    code, out, err = run_main(["--port", str(tmp_path / "ttyUSB9")])
    assert (code, out) == (1, [])
    assert err.startswith(f"telemetry-gateway decode: --port: cannot open {tmp_path}/ttyUSB9: ")


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_reading_with_the_summary_and_exit_0(tmp_path, number):
    board = Pty()
    process = subprocess.Popen([sys.executable, "-m", "telemetry_gateway", "decode", "--port", board.path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    os.write(board.master, C5 + b"\n")
    first = process.stdout.readline()  # read and printed at once, not held in a buffer
    assert json.loads(first)["counter"] == 5
    process.send_signal(number)
    out, err = process.communicate(timeout=10)
    board.unplug()
    assert process.returncode == 0 and out == b""
    assert err.decode().endswith(" lines=1 frames=1 accepted=0 bad_mac=0 replay=0 unsigned=0 unverified=1 status=0 "
                                 "rejected=0 end=signal\n")
    assert os.listdir(tmp_path) == []


def test_seconds_ends_a_silent_port():
    board = Pty()
    started = time.monotonic()
    code, out, err = run_main(["--port", board.path, "--seconds", "0.3"])
    board.unplug()
    assert code == 0 and out == [] and err.endswith(" lines=0 frames=0 accepted=0 bad_mac=0 replay=0 unsigned=0 "
                                                    "unverified=0 status=0 rejected=0 end=seconds\n")
    assert 0.3 <= time.monotonic() - started < 3
