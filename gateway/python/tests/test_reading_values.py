"""A frame's values as the spool stores them (spool.md, the `vals` column): gateway/contract/vectors/
reading_values.jsonl, packed and unpacked bit for bit (-0.0 and NaN included)."""

import json
import struct
from pathlib import Path

import pytest

from telemetry_gateway.reading_values import pack_values, unpack_values

VECTORS = [json.loads(line) for line in
           (Path(__file__).resolve().parents[2] / "contract" / "vectors" / "reading_values.jsonl").read_text().splitlines()]


def number(value) -> float:
    return float(value)  # "NaN", "Infinity", "-Infinity": the values JSON cannot hold (README, reading_values.jsonl)


def bits(x: float) -> bytes:
    return struct.pack(">d", x)


@pytest.mark.parametrize("case", [c for c in VECTORS if "values" in c], ids=lambda c: c["name"])
def test_pack_and_unpack(case):
    values = tuple((name, number(value)) for name, value in case["values"])
    names, data = pack_values(values)
    assert (names, data.hex()) == (case["expect"]["metrics"], case["expect"]["vals"])
    back = unpack_values(case["expect"]["metrics"], bytes.fromhex(case["expect"]["vals"]))
    assert [name for name, _ in back] == [name for name, _ in values]
    assert [bits(x) for _, x in back] == [bits(x) for _, x in values]  # == would take -0.0 for 0.0, never NaN


@pytest.mark.parametrize("case", [c for c in VECTORS if "unpack" in c], ids=lambda c: c["name"])
def test_unpack_refuses(case):
    assert case["expect"] == "refused"
    with pytest.raises(struct.error):
        unpack_values(case["unpack"]["metrics"], bytes.fromhex(case["unpack"]["vals"]))
