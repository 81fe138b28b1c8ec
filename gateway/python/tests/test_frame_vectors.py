"""The shared protocol vectors, byte for byte (firmware/protocol/vectors). The encoder is the simulated board's
(firmware/board_sim proves it against encode.json); the gateway only decodes."""

import json
import math
from pathlib import Path

import pytest

from telemetry_gateway.contract_constants import REJECT_REASONS
from telemetry_gateway.frame import Frame, Status, crc16_ccitt_false, decode_line

VECTORS = Path(__file__).resolve().parents[3] / "firmware" / "protocol" / "vectors"


def cases(name):
    doc = json.loads((VECTORS / name).read_text(encoding="ascii"))
    return pytest.mark.parametrize("case", doc["cases"], ids=[c.get("name", c.get("input")) for c in doc["cases"]])


@cases("crc.json")
def test_crc(case):
    assert f"{crc16_ccitt_false(case['input'].encode('ascii')):04X}" == case["crc"]


@cases("encode.json")
def test_encoded_lines_decode_back(case):
    decoded = decode_line(case["line"].encode("latin-1"))
    assert decoded == Frame.of("v1", case["source"], case["seq"], case["t"],
                            tuple((k, float(v)) for k, v in case["values"]))


def as_vector(decoded):
    if isinstance(decoded, Frame):
        vector = {"kind": "frame", "format": decoded.format, "source": decoded.source, "seq": decoded.seq,
                  "t": decoded.t, "values": [[k, v] for k, v in decoded.values]}
        if decoded.signature is not None:
            vector.update(counter=decoded.signature.counter, signed=decoded.signature.signed.hex().upper(),
                          tag=decoded.signature.tag.hex().upper())
        return vector
    if isinstance(decoded, Status):
        return {"kind": "status", "text": decoded.text}
    return {"kind": "reject", "reason": decoded.reason}


@cases("decode.json")
def test_decode(case):
    got = as_vector(decode_line(case["line"].encode("latin-1")))
    assert got == case["expect"]
    if got["kind"] == "frame":  # == treats -0.0 and 0.0 alike; the sign of zero is part of the value
        for (_, g), (_, e) in zip(got["values"], case["expect"]["values"]):
            assert math.copysign(1, g) == math.copysign(1, e)


def test_vectors_cover_every_reject_reason():
    doc = json.loads((VECTORS / "decode.json").read_text(encoding="ascii"))
    covered = {c["expect"]["reason"] for c in doc["cases"] if c["expect"]["kind"] == "reject"}
    assert covered == set(REJECT_REASONS["decode"])
