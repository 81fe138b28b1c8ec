"""Differential fuzzing of the two gateways' line decoders: over 100,000 random and mutated lines
through the Python gateway's `decode` and the Node gateway's `decode`, which must give the same result for every
line: kind, format, source, seq, t, metric names, values bit for bit (-0.0 is not 0.0) and reject reason; then a
room board's CSV stream through `decode --csv`. Both commands promise the same text too, so that is compared last.

Neither gateway's code is imported: each runs as a command, DECODE_COMMAND_PYTHON / DECODE_COMMAND_NODE (shell
words, run in the repository root). What is valid is never asked here: the decoders only have to agree, so the
generator may make anything; its mix is checked on the results (kinds and reject reasons must all be frequent),
so it cannot pass on garbage alone. FUZZ_SEED=n replays a run.

Lines never contain LF: it separates them (both commands split at LF only and drop one CR before it). A CR
elsewhere stays in the line and reaches both decoders, as it never would from a serial port, whose line assembler
ends lines at a CR too; the decoders take any bytes, so they must agree on those lines as well.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import struct
import subprocess
import time
from collections import Counter
from pathlib import Path

from telemetry_board_sim import crc16_ccitt_false, encode_frame

EVERY_GATEWAY_INSIDE = True  # conftest: runs both gateways itself, not once per gateway

ROOT = Path(__file__).resolve().parents[2]
LINES = 100_000
CSV_LINES = 30_000
CSV_COLUMNS = ("light", "temp")
MAX_LINE = 200
# PROTOCOL.md section 4: every reason a frame decoder gives, and a CSV port's.
DECODE_REASONS = ("too_long", "empty", "no_frame", "bad_syntax", "bad_crc", "bad_version", "bad_source", "bad_seq",
                  "bad_key", "duplicate_key", "bad_value", "bad_time", "no_values", "bad_json", "wrong_destination",
                  "bad_payload")
CSV_REASONS = ("too_long", "csv_column_count", "csv_empty_field", "csv_bad_number")
VECTORS = ROOT / "firmware" / "protocol" / "vectors"

# The gateways' own `decode` commands (DECODE_COMMAND_PYTHON / DECODE_COMMAND_NODE replace them).
_PYTHON_DECODE = [str(ROOT / ".venv" / "bin" / "telemetry-gateway"), "decode"]
_NODE_DECODE = [str(ROOT / "gateway" / "node" / "bin" / "telemetry-gateway-node"), "decode"]


def decode_command(variable: str, default: list[str]) -> list[str]:
    return shlex.split(os.environ[variable]) if os.environ.get(variable) else default


SOURCES = ["G", "node3", "room_2-a", "logger1", "A" * 32, "x-_9"]
KEYS = ["temp_in", "temp_out", "humidity", "light", "vbat", "temp", "a", "k9", "a_b_c", "abcdefghijklmnop"]
BAD_NAMES = ["", "A", "Temp", "1a", "_a", "a-b", "a" * 17, "t", "temp in", "é", "😀", "a.b", "source", "a\\n",
             "a\\u0000"]
# Spellings at the edges of the value rule `[+-]?[0-9]+(\.[0-9]+)?` and of IEEE-754 rounding.
DECIMAL_EDGES = ["0", "-0", "+0", "0.0", "-0.0", "+0.000", "007", "-007.50", "00000000000000000001", "4.35",
                 "9007199254740993", "9007199254740992.5000000000000001", "0.1", "0.30000000000000004", "2.675",
                 "1.00000000000000011102230246251565404236316680908203125", "123456789012345678901234567890",
                 "99999999999999999999999", "0.9999999999999999999999", "1.7976931348623157", "1",
                 "0." + "0" * 150 + "1", "1" + "0" * 180]
NUMBER_NEAR_MISSES = ["", "-", "+", ".5", "5.", "-.5", "1e5", "1E5", "1e-5", "1e+5", "0x1F", "0X10", "nan", "NaN",
                      "-nan", "inf", "-inf", "Infinity", "ovf", "1_000", " 1", "1 ", "--1", "+-1", "1.2.3", "0b101",
                      "1e", "1..2", "\u0661\u0662", "\uff11", "\u00bd", "1\x00", "\t1", "1\r"]
JSON_NUMBERS = ["0", "-0", "-0.0", "-0e0", "0e-5", "1e400", "-1e400", "1E-400", "-1e-400", "1.5e308",
                "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "2e308", "4.9e-324",
                "2.4703282292062327e-324", "2.4703282292062328e-324", "123456789012345678901234567890",
                "-123456789012345678901234567890123456789", "9007199254740993", "0.1e1", "1E+2", "1e-0", "1" * 150]
JSON_NOT_NUMBERS = ["01", "+1", ".5", "1.", "0x10", "NaN", "Infinity", "-Infinity", "nan", "1e", "1e+", "--1", "-",
                    "00", "1.e5", "\u0661", "tru", "nul", "True"]
TIMES = ["0", "1700000000123", "999999999999999", "1000000000000000", "01", "-1", "1.5", "", "+1", "1e12", "00"]
SEQS = ["0", "65535", "65536", "01", "-1", "+1", "", "99999", "100000", "1.0", " 1", "1e3", "\u0663"]
STRING_PIECES = ["G", "C", "abc", "room 2", '\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000",
                 "\\u001f", "\\u0043", "\\ud800", "\\udfff", "\\ud83d\\ude00", "\\uDEAD", "\\uD83D", "é", "😀",
                 "\u2028", "\ufeff", "\x01", "\x7f", "\\x41", "\\u12", "\\U0041", "\\'", "\ud800", "\t"]
INTERESTING_BYTES = b"\x00\x80\xff\xc3\xa9\xed$*,=\"{}[]#:. \t\r\\0123456789eE+-xT"
BLANKS = ["", "", "", " ", "\t", "\r", " \t", "  "]


class LineFuzzer:
    """Lines of every kind a serial port may carry, well-formed, subtly broken and mangled."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vector_lines = vector_lines("decode.json") + vector_lines("room_csv.json")
        makers = ((self.valid_frame, 18), (self.crafted_frame, 18), (self.legacy, 22), (self.status, 4),
                  (self.blank, 2), (self.noise_line, 4), (self.vector_line, 2), (self.mutated, 25), (self.overlong, 5),
                  (self.signed_frame, 6))
        self.makers, self.weights = zip(*makers)

    # --- pieces ----------------------------------------------------------------------------------------------------
    def digits(self, count: int) -> str:
        return "%0*d" % (count, self.rng.randrange(10 ** count))

    def decimal(self) -> str:
        """Text the v1 value rule accepts."""
        rng = self.rng
        if rng.random() < 0.2:
            return rng.choice(DECIMAL_EDGES)
        text = rng.choice(["", "", "-", "+"]) + self.digits(rng.choice([1, 1, 2, 2, 3, 5, 10, 17, 20, 40]))
        if rng.random() < 0.6:
            text += "." + self.digits(rng.choice([1, 2, 2, 3, 6, 15, 17, 25, 60]))
        return text

    def value(self) -> str:
        return self.decimal() if self.rng.random() < 0.85 else self.rng.choice(NUMBER_NEAR_MISSES)

    def json_number(self, clean: bool = False) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            return rng.choice(JSON_NUMBERS)
        if roll < 0.32 and not clean:
            return rng.choice(JSON_NOT_NUMBERS)
        text = rng.choice(["", "-"]) + str(rng.choice([rng.randint(0, 100), rng.getrandbits(rng.randint(1, 200))]))
        if rng.random() < 0.4:
            text += "." + self.digits(rng.randint(1, 20))
        if rng.random() < 0.2:
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 400))
        return text

    def json_string(self, clean: bool = False) -> str:
        pieces = STRING_PIECES[:STRING_PIECES.index("\x01")] if clean else STRING_PIECES
        return '"' + "".join(self.rng.choices(pieces, k=self.rng.randint(0, 4))) + '"'

    def json_value(self, clean: bool = False, depth: int = 0) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6 or (clean and roll < 0.8):
            return self.json_number(clean)
        if roll < 0.75:
            return rng.choice(["true", "false", "null", '"12"', '"N"', "{}", "[]", "[1,2]", '{"a":1,"a":2}'])
        if roll < 0.85:
            return self.json_string(clean)
        if roll < 0.9:
            depth = rng.randint(1, 60)
            return rng.choice(["[" * depth + "]" * depth, '{"x":' * depth + "1" + "}" * depth])
        if depth < 3:
            inner = [f'"{rng.choice(KEYS)}":{self.json_value(clean, depth + 1)}' for _ in range(rng.randint(0, 3))]
            return rng.choice(["{" + ",".join(inner) + "}", "[" + ",".join(v.split(":", 1)[1] for v in inner) + "]"])
        return "null"

    def noise(self, size: int, without: bytes = b"\n") -> bytes:
        data = self.rng.randbytes(size) if self.rng.random() < 0.5 else \
            bytes(self.rng.choices(INTERESTING_BYTES, k=size))
        return data.translate(None, without)

    def source(self) -> str:
        if self.rng.random() < 0.7:
            return self.rng.choice(SOURCES)
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
        return "".join(self.rng.choices(alphabet, k=self.rng.randint(1, 32)))

    # --- lines -----------------------------------------------------------------------------------------------------
    def valid_frame(self) -> bytes:
        rng = self.rng
        values = [(key, self.decimal()) for key in rng.sample(KEYS, rng.randint(1, 5))]
        t = rng.choice([None, None, 0, rng.randrange(10 ** 15), 1_700_000_000_123]) if rng.random() < 0.3 else None
        source, seq = self.source(), rng.choice([0, 65535, rng.randrange(65536)])
        try:
            line = encode_frame(source, seq, values, t=t).rstrip(b"\n")
        except ValueError:  # over 200 bytes: the encoder will not, a board's bug might (too_long)
            pairs = ([] if t is None else [f"t={t}"]) + [f"{key}={text}" for key, text in values]
            line = with_right_crc(",".join([f"$T1,{source},{seq}", *pairs]).encode() + b"*0000")
        if rng.random() < 0.1:  # boot garbage before the frame
            line = self.noise(rng.randint(1, 40), without=b"\n$") + line
        return line

    def signed_frame(self) -> bytes:
        """A T2 line (PROTOCOL.md S1-S5) with a matching CRC: a payload mostly well formed, at times off in its
        length, version byte, node id, a metric id or its source; the tag random (no decoder checks it)."""
        rng = self.rng
        node = rng.choice([1, 3, 6, 254, 0, 255])
        ids = [rng.choice([1, 2, 3, 4, 5, 6, 6, 9, 0]) for _ in range(rng.choice([0, 1, 3, 5, 5, 6]))]
        payload = bytes([rng.choice([2] * 8 + [1, 3]), node]) + rng.randbytes(9) + b"".join(
            bytes([metric_id]) + rng.randbytes(2) for metric_id in ids) + rng.randbytes(6)
        if rng.random() < 0.1:
            payload = payload[:rng.randrange(len(payload))]
        text = payload.hex().upper() if rng.random() < 0.95 else payload.hex()
        source = f"node{node}" if rng.random() < 0.9 else rng.choice(["node03", "G", f"node{node + 1}"])
        return with_right_crc(f"$T2,{source},{text}*0000".encode())

    def crafted_frame(self) -> bytes:
        """A frame from parts that are each valid or at a rule's edge; mostly with a matching CRC, so the later
        steps (F3-F6) decide."""
        rng = self.rng
        fields = [rng.choice(["T1"] * 12 + ["T2", "T10", "T0", "t1", "T", "T1a", "", "V1", "T01"]),
                  self.source() if rng.random() < 0.85 else rng.choice(BAD_NAMES + ["", "s" * 33, "a$b"]),
                  str(rng.randrange(65536)) if rng.random() < 0.8 else rng.choice(SEQS)]
        keys: list[str] = []
        for _ in range(rng.choice([0, 1, 1, 2, 3, 5])):
            roll = rng.random()
            if roll < 0.1:
                fields.append("t=" + (rng.choice(TIMES) if rng.random() < 0.6 else self.digits(rng.randint(1, 16))))
                continue
            if roll < 0.15 and keys:
                key = rng.choice(keys)
            else:
                key = rng.choice(KEYS) if roll < 0.9 else rng.choice(BAD_NAMES)
            keys.append(key)
            fields.append(rng.choice([f"{key}={self.value()}"] * 12 + [key, f"{key}=={self.value()}", "", "="]))
        if rng.random() < 0.05:
            del fields[rng.randrange(1, 3):]
        body = ",".join(fields).encode("utf-8")
        if rng.random() < 0.03:
            body = body.replace(b",", b"*", 1)
        crc = b"%04X" % crc16_ccitt_false(body)
        roll = rng.random()
        if roll < 0.05:
            crc = crc.lower() if crc.lower() != crc else b"%04x" % ((int(crc, 16) + 0xA) & 0xFFFF)
        elif roll < 0.1:
            crc = b"%04X" % ((int(crc, 16) + rng.randint(1, 0xFFFF)) & 0xFFFF)
        elif roll < 0.13:
            crc = rng.choice([crc[:3], crc + b"0", crc + b" ", b""])
        return b"$" + body + b"*" + crc

    def legacy(self) -> bytes:
        """The original receiver's JSON object: clean (valid JSON, source, destination and names) or with members
        at the edges of J1-J5."""
        rng = self.rng
        clean = rng.random() < 0.4
        sources = [f'"{self.source()}"', '"\\u0047"']
        destinations = ['"C"', '"\\u0043"']
        if not clean:
            sources = sources * 15 + ['"bad source"', '""', '"' + "A" * 33 + '"', "1", "null", '"\\ud800"', '"é"',
                                     "[]", '"G\\n"', '"G\\u0000"', '"G\\r"']
            destinations = destinations * 15 + ['"c"', '"S"', '"C "', "null", "67", '["C"]']
        members = []
        if clean or rng.random() < 0.95:
            members.append('"source":' + rng.choice(sources))
        if clean or rng.random() < 0.95:
            members.append('"destination":' + rng.choice(destinations))
        if rng.random() < 0.3:
            members.append('"action":' + rng.choice(['"N"', "1", "true"]))
        count = rng.choice([0, 1, 2, 3, 4, 6])
        if clean:
            names = rng.sample(KEYS, count)
        else:
            names = [rng.choice(KEYS) if rng.random() < 0.8 else rng.choice(BAD_NAMES + ["\\ud83d\\ude00"])
                     for _ in range(count)]
        if names and rng.random() < 0.05:
            names[0] = "\\u0061" if "a" not in names else "\\u0062"  # a name spelled with an escape
        members += [f'"{name}":{self.json_value(clean)}' for name in names]
        if rng.random() < 0.5:
            rng.shuffle(members)
        separator = lambda: rng.choice(BLANKS) + "," + rng.choice(BLANKS)  # noqa: E731
        text = "{" + rng.choice(BLANKS) + "".join(m + separator() for m in members[:-1]) + \
            "".join(members[-1:]) + rng.choice(BLANKS) + "}"
        text = rng.choice(["", "", "", " ", "\t ", " \t  "]) + text
        if rng.random() < 0.1:
            text += rng.choice([" ", "\r", "\t\r "] + ([] if clean else ["}", "x", ",", "{}", "]"]))
        return text.encode("utf-8", "surrogatepass")  # a raw lone surrogate: bytes that are not UTF-8

    def status(self) -> bytes:
        rng = self.rng
        if rng.random() < 0.5:
            text = rng.choice(["boot base_station protocol=T1 payload=v1 channel=76 nodes=1-6", "radio ok",
                               f"stats uptime_s={rng.randrange(10**6)} radio=ok received=3 frames=2 rejected=1",
                               "reject payload pipe=2 detail=5"]).encode()
        else:
            text = self.noise(rng.randint(0, 80))
        return b"#" + rng.choice([b"", b" ", b"\t ", b""]) + text + rng.choice([b"", b" ", b"\t", b""])

    def noise_line(self) -> bytes:
        return self.noise(self.rng.randint(1, 150))

    def blank(self) -> bytes:
        return self.rng.choice([b"", b" ", b"\t", b" \t \t", b"\r", b" \r", b"\t\r\r"])

    def base(self) -> bytes:
        makers = (self.valid_frame, self.crafted_frame, self.legacy, self.status, self.vector_line)
        return self.rng.choices(makers, (4, 3, 4, 1, 1))[0]()

    def vector_line(self) -> bytes:
        return self.rng.choice(self.vector_lines)

    def mutated(self, line: bytes | None = None) -> bytes:
        """Byte-level damage: flips, replacements, insertions, deletions, duplicated runs, truncation; then, half
        the time, the CRC of whatever frame is left made right again, so damage inside a body reaches F3-F6."""
        rng = self.rng
        data = bytearray(self.base() if line is None else line)
        for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
            at = rng.randrange(len(data) + 1)
            byte = rng.choice(INTERESTING_BYTES) if rng.random() < 0.6 else rng.randrange(256)
            op = rng.randrange(7)
            if op == 0 and at < len(data):
                data[at] ^= 1 << rng.randrange(8)
            elif op == 1 and at < len(data):
                data[at] = byte
            elif op == 2:
                data[at:at] = bytes([byte]) * rng.choice([1, 1, 2, 30])
            elif op == 3:
                del data[at:at + rng.choice([1, 1, 2, 5])]
            elif op == 4:
                data[at:at] = data[max(0, at - rng.randint(1, 20)):at]
            elif op == 5:
                del data[rng.randrange(len(data) + 1):]
            elif at + 1 < len(data):
                data[at], data[at + 1] = data[at + 1], data[at]
        line = bytes(data)
        if rng.random() < 0.5:
            line = with_right_crc(line)
        return line

    def overlong(self) -> bytes:
        """A line padded to a length around the 200-byte limit (or far past it)."""
        rng = self.rng
        line = self.base()
        target = rng.choice([MAX_LINE - 1, MAX_LINE, MAX_LINE, MAX_LINE + 1, MAX_LINE + 1, rng.randint(150, 400)])
        room = max(0, target - len(line))
        if line.lstrip(b" \t").startswith(b"{"):
            return b" " * room + line
        if b"$" in line:
            return b"x" * room + line  # boot garbage: a frame of exactly 200 bytes still decodes
        return line + self.noise(room, without=b"\n")[:room].ljust(room, b"x")

    def line(self) -> bytes:
        rng = self.rng
        line = rng.choices(self.makers, self.weights)[0]()
        if rng.random() < 0.05:
            line += rng.choice([b"\r", b"\r\r", b" \r"])  # the command drops one CR, the decoder another
        return line.replace(b"\n", b"\x0b")  # LF separates the lines

    # --- a room board's CSV port -------------------------------------------------------------------------------------
    def csv_line(self) -> bytes:
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:  # as the board prints them: light, then dtostrf's temperature, maybe padded
            temp = f"{rng.uniform(-40, 60):.2f}" if rng.random() < 0.8 else rng.choice(["-0.00", "0.00", "-0.0"])
            line = f"{rng.randint(0, 100)},{' ' * rng.choice([0, 0, 1, 2])}{temp}".encode()
        elif roll < 0.6:  # fields at the number rule's edges, blanks around them, too few or too many
            fields = [rng.choice(BLANKS[:5]) + (self.value() if rng.random() < 0.85 else rng.choice(["", " ", "\t"]))
                      + rng.choice(BLANKS[:5]) for _ in range(rng.choice([2] * 8 + [0, 1, 3, 4]))]
            line = ",".join(fields).encode("utf-8")
            if rng.random() < 0.05:
                line += b","
        elif roll < 0.7:  # another port's lines
            line = rng.choice([self.valid_frame, self.legacy, self.status, self.blank, self.vector_line])()
        elif roll < 0.93:
            line = self.mutated(f"{rng.randint(0, 100)},{rng.uniform(-40, 60):.2f}".encode())
        else:
            line = b" " * rng.choice([MAX_LINE - 5, MAX_LINE - 3, MAX_LINE - 2, rng.randint(150, 300)]) + b"57,21.50"
        if rng.random() < 0.05:
            line += b"\r"
        return line.replace(b"\n", b"\x0b")


def vector_lines(name: str) -> list[bytes]:
    """The protocol vectors' lines, without their endings: seeds for mutation."""
    cases = json.loads((VECTORS / name).read_text(encoding="ascii"))["cases"]
    return [c["line"].encode("latin-1").removesuffix(b"\n") for c in cases if "\n" not in c["line"][:-1]]


def with_right_crc(line: bytes) -> bytes:
    """The line with the 4 bytes after the `*` of its last `$` frame replaced by the CRC of that frame's body."""
    dollar = line.rfind(b"$")
    star = line.find(b"*", dollar)
    if dollar < 0 or star < 0:
        return line
    return line[:star + 1] + b"%04X" % crc16_ccitt_false(line[dollar + 1:star]) + line[star + 5:]


def run_decode(command: list[str], data: bytes, args: list[str]) -> list[str]:
    done = subprocess.run(command + args, input=data, capture_output=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, f"{shlex.join(command + args)} exited {done.returncode}: {done.stderr[-2000:]!r}"
    return done.stdout.decode("ascii").splitlines()


def double_bits(value: object) -> object:
    return struct.pack(">d", value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def comparable(text: str) -> object:
    """A decode result with its values as the bytes of their doubles: equal exactly when bit for bit equal."""
    result = json.loads(text)
    if result.get("kind") == "frame":
        result["values"] = [(name, double_bits(value)) for name, value in result["values"]]
    return {key: (value, type(value).__name__) for key, value in result.items()}  # 5 is not 5.0 for seq and t


def differences(lines: list[bytes], python: list[str], node: list[str]) -> tuple[list[str], list[str]]:
    """The first differing results, and (results equal) the first differing texts, each described for a report."""
    assert len(python) == len(lines) and len(node) == len(lines), \
        f"{len(lines)} lines in, python printed {len(python)}, node {len(node)}"
    results, texts = [], []
    for index, (line, p, n) in enumerate(zip(lines, python, node)):
        if p == n:
            continue
        where = f"line {index + 1}: {line!r}\n  python: {p}\n  node:   {n}"
        (results if comparable(p) != comparable(n) else texts).append(where)
    return results, texts


def fuzz_seed() -> int:
    return int(os.environ.get("FUZZ_SEED") or time.time_ns() % 2**32)


def check_agreement(seed: int, lines: list[bytes], args: list[str]) -> list[dict]:
    data = b"".join(line + b"\n" for line in lines)
    python = run_decode(decode_command("DECODE_COMMAND_PYTHON", _PYTHON_DECODE), data, args)
    node = run_decode(decode_command("DECODE_COMMAND_NODE", _NODE_DECODE), data, args)
    results, texts = differences(lines, python, node)
    assert not results, (f"FUZZ_SEED={seed}: the decoders disagree on {len(results)} of {len(lines)} lines; the "
                         "first ones:\n" + "\n".join(results[:5]))
    assert not texts, (f"FUZZ_SEED={seed}: same results, different text on {len(texts)} lines; the first ones:\n"
                       + "\n".join(texts[:5]))
    return [json.loads(text) for text in python]


def at_least(counts: Counter, share: float, total: int, seed: int, what: str) -> None:
    thin = {name: count for name, count in counts.items() if count < share * total}
    assert not thin, f"FUZZ_SEED={seed}: the mix is too thin in {what}: {thin} of {total} (all: {dict(counts)})"


def test_both_decoders_agree_on_100000_fuzzed_lines():
    seed = fuzz_seed()
    print(f"FUZZ_SEED={seed}")
    fuzzer = LineFuzzer(random.Random(seed))
    lines = [fuzzer.line() for _ in range(LINES)]
    results = check_agreement(seed, lines, [])

    kinds = Counter(r["kind"] if r["kind"] != "frame" else r["format"] for r in results)
    reasons = Counter(r["reason"] for r in results if r["kind"] == "reject")
    with_t = sum(1 for r in results if r["kind"] == "frame" and r["t"] is not None)
    print(f"{LINES} lines: {dict(kinds)}; rejects {dict(reasons)}; {with_t} frames with t")
    at_least(Counter({kind: kinds[kind] for kind in ("v1", "legacy", "status", "reject")}), 0.02, LINES, seed,
             "kinds")
    at_least(Counter({reason: reasons[reason] for reason in DECODE_REASONS}), 0.001, LINES, seed, "reject reasons")
    assert with_t > 0.005 * LINES, f"FUZZ_SEED={seed}: {with_t} frames with t"


def test_both_csv_decoders_agree_on_a_fuzzed_room_board_stream():
    seed = fuzz_seed()
    print(f"FUZZ_SEED={seed}")
    fuzzer = LineFuzzer(random.Random(seed))
    lines = [fuzzer.csv_line() for _ in range(CSV_LINES)]
    results = check_agreement(seed, lines, ["--csv", "--source", "room", "--columns", ",".join(CSV_COLUMNS)])

    kinds = Counter(r["kind"] for r in results)
    reasons = Counter(r["reason"] for r in results if r["kind"] == "reject")
    print(f"{CSV_LINES} csv lines: {dict(kinds)}; rejects {dict(reasons)}")
    assert all(r["source"] == "room" and r["format"] == "csv" for r in results if r["kind"] == "frame")
    at_least(Counter({"frame": kinds["frame"], "reject": kinds["reject"]}), 0.1, CSV_LINES, seed, "kinds")
    at_least(Counter({reason: reasons[reason] for reason in CSV_REASONS}), 0.005, CSV_LINES, seed, "reject reasons")
