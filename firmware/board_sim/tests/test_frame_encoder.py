"""The board's frame encoder against the shared protocol vectors (firmware/protocol/vectors), byte for byte, and
PROTOCOL.md's rules for what it must refuse."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from telemetry_board_sim import crc16_ccitt_false, encode_frame, format_value

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def vectors(name):
    return json.loads((VECTORS / name).read_text(encoding="ascii"))["cases"]


@pytest.mark.parametrize("case", vectors("crc.json"), ids=lambda case: case["input"] or "empty")
def test_crc_vectors(case):
    assert crc16_ccitt_false(case["input"].encode("ascii")) == int(case["crc"], 16)


@pytest.mark.parametrize("case", vectors("encode.json"), ids=lambda case: case["name"])
def test_encode_vectors(case):
    values = [(key, text) for key, text in case["values"]]
    assert encode_frame(case["source"], case["seq"], values, t=case["t"]).decode("latin-1") == case["line"]


@pytest.mark.parametrize("value,text", [
    (57, "57"), (-12, "-12"), (11.77, "11.77"), (57.0, "57.0"), (1e-7, "0.0000001"), (1e16, "10000000000000000"),
    (-0.5, "-0.5"), ("0003300", "0003300"), ("-3.25", "-3.25"),
])
def test_format_value(value, text):
    assert format_value(value) == text


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), "1e3", ".5", "5.", "", "nan", True])
def test_format_value_refuses(value):
    with pytest.raises(ValueError):
        format_value(value)


@pytest.mark.parametrize("args,kwargs", [
    (("bad source", 1, [("a", 1)]), {}), (("x" * 33, 1, [("a", 1)]), {}), (("G", 65536, [("a", 1)]), {}),
    (("G", -1, [("a", 1)]), {}), (("G", 1.0, [("a", 1)]), {}), (("G", 1, []), {}), (("G", 1, [("t", 1)]), {}),
    (("G", 1, [("a", 1), ("a", 2)]), {}), (("G", 1, [("Bad", 1)]), {}), (("G", 1, [("a" * 17, 1)]), {}),
    (("G", 1, [(f"k{i}", 123456.789) for i in range(20)]), {}),  # over 200 bytes
    (("G", 1, [("a", 1)]), {"t": -1}), (("G", 1, [("a", 1)]), {"t": 10 ** 15}), (("G", 1, [("a", 1)]), {"t": 1.5}),
])
def test_encode_refuses_what_would_not_decode(args, kwargs):
    with pytest.raises(ValueError):
        encode_frame(*args, **kwargs)


# PROTOCOL.md section 1, read independently of the encoder: `$T1,<source>,<seq>,<key>=<value>...*<CRC>\n`.
_LINE = re.compile(rb"\$(T1,([A-Za-z0-9_-]{1,32}),(0|[1-9][0-9]{0,4}),([^*]+))\*([0-9A-F]{4})\n")
sources = st.from_regex(r"[A-Za-z0-9_-]{1,32}", fullmatch=True)
keys = st.from_regex(r"[a-s][a-z0-9_]{0,15}", fullmatch=True)  # never "t"
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9).map(lambda x: round(x, 4))


@settings(max_examples=300)
@given(sources, st.integers(0, 65535), st.dictionaries(keys, finite, min_size=1, max_size=4),
       st.none() | st.integers(0, 10 ** 15 - 1))
def test_every_encoded_line_follows_the_protocol(source, seq, values, t):
    texts = ([["t", str(t)]] if t is not None else []) + [[k, format_value(v)] for k, v in values.items()]
    try:
        line = encode_frame(source, seq, list(values.items()), t=t)
    except ValueError:  # over 200 bytes: refused rather than printed and rejected
        assert len(f"$T1,{source},{seq}," + ",".join(f"{k}={v}" for k, v in texts) + "*0000") > 200
        return
    match = _LINE.fullmatch(line)
    assert match and len(line) - 1 <= 200
    body, got_source, got_seq, pairs, crc = match.groups()
    assert int(crc, 16) == crc16_ccitt_false(body)
    assert (got_source.decode(), int(got_seq)) == (source, seq)
    got = [pair.decode().split("=", 1) for pair in pairs.split(b",")]
    assert got == texts
    assert all(float(text) == value for (_, text), value in zip(got[-len(values):], values.values()))
