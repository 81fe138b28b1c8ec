"""Gateway conformance, end to end: 100,000 random and mutated lines through a real pty into the gateway and
Cassandra. The valid frames among them land as exactly their rows (every metric value and timestamp) and nothing
else lands; every line is counted once, as a frame, a duplicate, a status line or a reject.

What is valid is known by construction, from PROTOCOL.md's rules, never by asking a decoder: valid frames are
encoded; every invalid line is built to break a rule (a random mutation whose CRC still matches gets other CRC
digits; noise has no `$` and cannot start a status line or a JSON object). FUZZ_SEED=n replays a run.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest

from conftest import connect
from telemetry_conformance import Board, GatewayUnderTest, wait_for
from telemetry_conformance.scenario_fixtures import keyspace  # noqa: F401 (fixtures)
from telemetry_board_sim import crc16_ccitt_false, encode_frame

pytestmark = pytest.mark.cassandra

LINES = 100_000
MAX_LINE = 200  # PROTOCOL.md: a line is at most 200 bytes, not counting its ending
SOURCES = [f"fz-{i}" for i in range(6)] + ["G", "node_17"]
KEYS = ["temp_in", "temp_out", "humidity", "light", "vbat", "k9", "a_b_c"]
ENDINGS = [b"\n", b"\r\n", b"\r"]
NOT_IN_LINES = b"\r\n"
EPOCH = datetime(1970, 1, 1)  # the driver's timestamps are naive UTC
_F1 = re.compile(rb"\$([^*]*)\*([0-9A-F]{4})")  # PROTOCOL.md F1, for the frame that starts at the last `$`


@dataclass
class Expected:
    """What the stream must do, counted while it is built."""
    rows: set = field(default_factory=set)  # (source, day, metric, ts ms, value)
    kinds: Counter = field(default_factory=Counter)  # lines by kind
    lines: int = 0


class FuzzStream:
    def __init__(self, rng: random.Random, t_base_ms: int) -> None:
        self.rng = rng
        self.t = t_base_ms  # every valid frame gets its own explicit t: its rows' keys are known exactly
        self.seqs = dict.fromkeys(SOURCES, 0)
        self.last: dict[str, bytes] = {}  # each source's last valid frame, for duplicates and conflicts
        self.expected = Expected()
        self.out: list[bytes] = []

    # --- building blocks ---------------------------------------------------------------------------------------
    def noise(self, size: int, alphabet: bytes | None = None) -> bytes:
        """Random bytes, NUL and >= 0x80 included, never a line ending or a `$`."""
        if alphabet is not None:
            return bytes(self.rng.choice(alphabet) for _ in range(size))
        data = self.rng.randbytes(size).translate(None, NOT_IN_LINES + b"$")
        return data or b"x"

    def value_text(self) -> str:
        whole = self.rng.choice([self.rng.randint(-40, 120), self.rng.randint(-10**6, 10**6), 0])
        form = self.rng.randrange(4)
        if form == 0:
            return str(whole)
        digits = self.rng.randint(1, 6)
        text = f"{abs(whole)}.{self.rng.randrange(10 ** digits):0{digits}d}"
        return ("-" if whole < 0 else self.rng.choice(["", "+"])) + text

    def frame(self, source: str, seq: int) -> tuple[bytes, int, list[tuple[str, str]]]:
        """A valid frame's text without its ending, its t and its values."""
        self.t += self.rng.randint(1, 3)
        values = [(key, self.value_text()) for key in self.rng.sample(KEYS, self.rng.randint(1, 4))]
        return encode_frame(source, seq, values, t=self.t).rstrip(b"\n"), self.t, values

    def emit(self, kind: str, content: bytes) -> None:
        """One line: content (never empty, no line ending) and an ending; sometimes extra endings, which make empty
        lines, and empty lines are not lines."""
        assert content and not any(b in content for b in NOT_IN_LINES)
        self.out.append(content + self.rng.choice(ENDINGS))
        if self.rng.random() < 0.05:
            self.out.append(b"".join(self.rng.choices(ENDINGS, k=self.rng.randint(1, 3))))
        self.expected.kinds[kind] += 1
        self.expected.lines += 1

    # --- line kinds --------------------------------------------------------------------------------------------
    def valid(self) -> None:
        source = self.rng.choice(SOURCES)
        seq = self.seqs[source]
        self.seqs[source] += 1
        line, t, values = self.frame(source, seq)
        day = datetime.fromtimestamp(t / 1000, timezone.utc).date()
        self.expected.rows |= {(source, day, key, t, float(text)) for key, text in values}
        self.last[source] = line
        if self.rng.random() < 0.1:  # boot garbage before the frame: dropped by the decoder (PROTOCOL step 5)
            prefix = self.noise(self.rng.randint(1, MAX_LINE - len(line)))
            if prefix[:1] == b"#":  # would make the line a status line
                prefix = b"~" + prefix[1:]
            line = prefix + line
        self.emit("frame", line)

    def duplicate(self) -> None:
        """A retransmission right after the frame: same source, seq and content (any ending): dropped once."""
        if not self.last:
            return self.valid()
        self.emit("duplicate", self.last[self.rng.choice(list(self.last))])

    def conflict(self) -> None:
        """The same source and seq as its last frame, other values and t: not a retransmission; stored."""
        source = self.rng.choice(list(self.last) or SOURCES)
        seq = self.seqs[source] - 1
        if seq < 1:  # a seq 0 repeated with other content is a board restart (also stored, counted elsewhere)
            return self.valid()
        line, t, values = self.frame(source, seq)
        day = datetime.fromtimestamp(t / 1000, timezone.utc).date()
        self.expected.rows |= {(source, day, key, t, float(text)) for key, text in values}
        self.last[source] = line
        self.emit("conflict", line)

    def mutated(self) -> None:
        """A frame with random byte damage: never a valid frame, never a status line."""
        source = self.rng.choice(SOURCES)
        line = bytearray(self.frame(source, self.seqs[source])[0])  # the seq is not used up: this never decodes
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            op, at = self.rng.randrange(6), self.rng.randrange(len(line))
            byte = self.noise(1)[0]
            if op == 0:
                line[at] ^= 1 << self.rng.randrange(8)
                if line[at] in NOT_IN_LINES:
                    line[at] = byte
            elif op == 1 and len(line) > 1:
                del line[at]
            elif op == 2:
                line.insert(at, byte)
            elif op == 3:
                line[at] = byte
            elif op == 4:
                del line[max(1, at):]
            else:
                line[at] = self.rng.choice(b"$*,=.-0123456789ABCDEFabcdef")
        line = bytes(line)
        dollar = line.rfind(b"$")
        if dollar < 0:
            if line[:1] in (b"#", b"{", b" ", b"\t"):  # a status line, or JSON: not this kind's business
                line = b"~" + line[1:]
        else:
            match = _F1.fullmatch(line, dollar)
            if match and crc16_ccitt_false(match[1]) == int(match[2], 16):  # still intact: break the CRC
                line = line[:-4] + b"%04X" % ((int(match[2], 16) + self.rng.randint(1, 0xFFFE)) % 0x10000)
            if line[:1] == b"#":
                line = b"~" + line[1:]
        self.emit("mutated", line)

    def rule_broken(self) -> None:
        """A frame with a correct CRC that breaks one rule of PROTOCOL.md (F3-F6)."""
        source = self.rng.choice(SOURCES)
        seq = str(self.seqs[source])
        body = self.rng.choice([
            f"T1,{source},0{seq}",  # seq with a leading zero
            f"T1,{source},65536,a=1",
            f"T1,{source},-1,a=1",
            f"T3,{source},{seq},a=1",  # another version
            f"t1,{source},{seq},a=1",
            f"T1,bad source,{seq},a=1",
            f"T1,{'s' * 33},{seq},a=1",
            f"T1,,{seq},a=1",
            f"T1,{source},{seq},Temp=1",  # key rule
            f"T1,{source},{seq},a=1,a=2",  # a key twice
            f"T1,{source},{seq},a=1e3",  # value rule
            f"T1,{source},{seq},a=.5",
            f"T1,{source},{seq},a=nan",
            f"T1,{source},{seq},t=12.5,a=1",  # t rule
            f"T1,{source},{seq},t=1234567890123456,a=1",
            f"T1,{source},{seq},t=1",  # no metric
            f"T1,{source},{seq}",
            f"T1,{source}",
            f"T1,{source},{seq},a",  # a field without =
            f"T1,{source},{seq},,a=1",
        ]).encode()
        self.emit("rule_broken", b"$" + body + b"*%04X" % crc16_ccitt_false(body))

    def noise_line(self) -> None:
        line = self.noise(self.rng.randint(1, 150))
        if line[:1] in (b"#", b"{", b" ", b"\t"):
            line = b"~" + line[1:]
        self.emit("noise", line)

    def overlong(self) -> None:
        """Over 200 bytes; sometimes ending in a valid frame, which must not land."""
        line = self.noise(self.rng.randint(MAX_LINE + 1 - 120, 700))
        if self.rng.random() < 0.5:
            source = self.rng.choice(SOURCES)
            line += self.frame(source, self.seqs[source])[0]
        if len(line) <= MAX_LINE:
            line += b"x" * (MAX_LINE + 1 - len(line))
        self.emit("too_long", line)

    def legacy_garbage(self) -> None:
        """Lines like the original receiver's JSON, each broken by construction."""
        source = self.rng.choice(SOURCES)
        good = f'{{"source": "{source}","destination": "C","temperaturein": 11.77,"light": 57,"action": "N"}}'
        line = self.rng.choice([
            good[:self.rng.randrange(1, len(good) - 1)],  # cut short: not one JSON object
            good.replace('"C"', '"S"'),  # not for the collector
            good.replace("11.77", "NaN"),
            good.replace("11.77", "1e999"),
            good.replace('"light"', '"temperaturein"'),  # a member twice
            good.replace(f'"{source}"', '"bad source!"'),
            good.replace('"temperaturein": 11.77,"light": 57', '"note": "x"'),  # no numbers
            good.replace('"light"', '"Light"'),
            good + "}",
            "[" + good + "]",
        ]).encode()
        if self.rng.random() < 0.3:
            line = b"  \t" + line
        self.emit("legacy_garbage", line)

    def status(self) -> None:
        self.emit("status", b"#" + self.noise(self.rng.randint(0, 60)))

    def blank(self) -> None:
        self.emit("blank", self.noise(self.rng.randint(1, 20), alphabet=b" \t"))

    def build(self, lines: int) -> bytes:
        kinds = [(self.valid, 30), (self.duplicate, 3), (self.conflict, 1), (self.mutated, 22),
                 (self.rule_broken, 8), (self.noise_line, 20), (self.overlong, 4), (self.legacy_garbage, 8),
                 (self.status, 2), (self.blank, 2)]
        makers, weights = zip(*kinds)
        while self.expected.lines < lines:
            self.rng.choices(makers, weights)[0]()
        self.out.append(b"\n")  # the last line is ended, whatever its ending was
        return b"".join(self.out)


def stored_rows(session) -> set:
    """Every readings row of the (fresh) keyspace: a full scan, so rows under any source or day show."""
    return {(r.source, r.day.date(), r.metric, (r.ts - EPOCH) // timedelta(milliseconds=1), r.value)  # exact ms
            for r in session.execute("SELECT source, day, metric, ts, value FROM readings")}


def settled(read, target: float, quiet_s: float = 3.0, timeout: float = 60.0) -> float:
    """read() once it reaches target, or once it stopped changing for quiet_s (then it never will)."""
    deadline = time.monotonic() + timeout
    value, since = read(), time.monotonic()
    while value < target and time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.1)
        if (new := read()) != value:
            value, since = new, time.monotonic()
    return value


def test_100000_fuzzed_lines_land_as_exactly_the_valid_frames_rows(tmp_path, keyspace, cassandra_node):
    seed = int(os.environ.get("FUZZ_SEED", time.time_ns() % 2**32))
    print(f"FUZZ_SEED={seed}")
    now_ms = int(time.time() * 1000)
    stream = FuzzStream(random.Random(seed), t_base_ms=now_ms - 3_600_000)
    data = stream.build(LINES)
    expected = stream.expected
    kinds = expected.kinds
    assert expected.lines >= LINES and stream.t < now_ms  # every t within [now - 366 days, now + 60 s]

    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    cluster = connect(cassandra_node)
    try:
        gateway.start()
        rng, at = random.Random(seed + 1), 0
        while at < len(data):  # writes of any size: reads split lines (and CRLFs) anywhere
            size = rng.choice([1, 7, 300, 4096, 65536])
            board.write(data[at:at + size])
            at += size
        lines = expected.lines
        lines_read = settled(lambda: gateway.metric("telemetry_gateway_lines_read_total", input=str(board.link)),
                             lines)
        assert lines_read == lines, f"seed {seed}: {lines_read} lines read, {lines} written"
        accepted = kinds["frame"] + kinds["conflict"]
        settled(lambda: gateway.metric("telemetry_gateway_frames_written_total"), accepted)
        wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == 0, 30, "an empty spool")

        stored = stored_rows(cluster.connect(keyspace))
        missing, extra = expected.rows - stored, stored - expected.rows
        assert not missing and not extra, (f"seed {seed}: {len(missing)} rows missing, e.g. {sorted(missing)[:3]}; "
                                           f"{len(extra)} rows that no valid frame had, e.g. {sorted(extra)[:3]}")

        samples = gateway.metrics_or_none()

        def total(name: str) -> float:
            return sum(v for (n, _), v in samples.items() if n == f"telemetry_gateway_{name}")
        rejects = {dict(labels)["reason"]: v for (n, labels), v in samples.items()
                   if n == "telemetry_gateway_rejects_total"}
        invalid = lines - accepted - kinds["duplicate"] - kinds["status"]
        assert {
            "lines_read": total("lines_read_total"), "accepted": total("frames_accepted_total"),
            "duplicates": total("duplicates_total"), "conflicts": total("seq_conflicts_total"),
            "status": total("status_lines_total"), "rejects": sum(rejects.values()),
            "too_long": rejects.get("too_long", 0), "empty": rejects.get("empty", 0),
            "partial_line": rejects.get("partial_line", 0), "seq_missing": total("seq_missing_frames_total"),
            "restarts": total("board_restarts_total"), "time_refused": total("explicit_time_refused_total"),
        } == {
            "lines_read": lines, "accepted": accepted,
            "duplicates": kinds["duplicate"], "conflicts": kinds["conflict"],
            "status": kinds["status"], "rejects": invalid,
            "too_long": kinds["too_long"], "empty": kinds["blank"],
            "partial_line": 0, "seq_missing": 0, "restarts": 0, "time_refused": 0,
        }, f"seed {seed}, rejects by reason: {rejects}"
        assert total("frames_accepted_total") + total("duplicates_total") + total("status_lines_total") + \
            sum(rejects.values()) == total("lines_read_total")  # every line counted exactly once
        assert gateway.stop() == 0
        print(f"{lines} lines ({dict(kinds)}), {len(data)} bytes; {len(stored)} rows stored; "
              f"rejects {rejects}")
    finally:
        cluster.shutdown()
        if gateway.process is not None and gateway.process.poll() is None:
            gateway.kill()
