"""gateway/contract/vectors/signing.jsonl against the verifier (signing.py), and the keys file's rules
(keys_file.py)."""

import json
import os
from pathlib import Path

import pytest

from telemetry_gateway.frame import Frame
from telemetry_gateway.keys_file import KeysFileError, parse_keys, read_keys
from telemetry_gateway.signed_frame import Signature
from telemetry_gateway.signing import SigningPolicy, Verifier

VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
CASES = [json.loads(line) for line in (VECTORS / "signing.jsonl").read_text(encoding="ascii").splitlines()]


def frame_of(vector: dict) -> Frame:
    signature = None
    if vector["format"] == "signed":
        signature = Signature(vector["counter"], bytes.fromhex(vector["signed"]), bytes.fromhex(vector["tag"]))
    return Frame.of(vector["format"], vector["source"], vector["seq"], vector["t"],
                    tuple((k, float(v)) for k, v in vector["values"]), signature)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_signing_vectors(case):
    params = case["params"]
    policy = SigningPolicy({source: bytes.fromhex(key) for source, key in params["keys"].items()},
                           frozenset(params["unsigned_allowed"]), params["require_signed"])
    verifier = Verifier(policy, params["counters"])
    for number, step in enumerate(case["steps"]):
        reason = verifier.verdict(frame_of(step["frame"]))
        assert (reason is None and step["expect"] == "accepted") or step["expect"] == {"reject": reason}, number
    assert verifier.counters == case["expect"]["counters"]


def test_changed_counters_are_taken_once():
    case = CASES[0]  # one accepted signed frame
    verifier = Verifier(SigningPolicy({"node3": bytes.fromhex(case["params"]["keys"]["node3"])}), {"node4": 5})
    assert verifier.verdict(frame_of(case["steps"][0]["frame"])) is None
    assert verifier.take_changed() == {"node3": 1000}
    assert verifier.take_changed() == {}


@pytest.mark.parametrize(("text", "error"), [
    ("node3 000102030405060708090a0b0c0d0e0f\nnode3 000102030405060708090A0B0C0D0E0F\n",
     "line 2: source node3 has a key on an earlier line"),
    ("node3 000102030405060708090a0b0c0d0e\n", "line 1: not `<source> <32 hex digits>`"),
    ("# keys\n\nnode 3 000102030405060708090a0b0c0d0e0f\n", "line 3: not `<source> <32 hex digits>`"),
    ("node3 000102030405060708090a0b0c0d0e0f extra\n", "line 1: not `<source> <32 hex digits>`"),
    ("node\u00e9 000102030405060708090a0b0c0d0e0f\n", "line 1: not `<source> <32 hex digits>`"),
])
def test_malformed_keys_files_name_the_line_not_its_text(text, error):
    with pytest.raises(KeysFileError) as raised:
        parse_keys(text)
    assert str(raised.value) == error
    assert "0e0f" not in str(raised.value).lower()


def test_keys_file_comments_blanks_and_both_cases():
    text = "  # c\n\n\tnode1\t8F1C2D3E4A5B6C7D8E9FA0B1C2D3E4F5  \nG 00112233445566778899aabbccddeeff"
    assert parse_keys(text) == {"node1": bytes.fromhex("8f1c2d3e4a5b6c7d8e9fa0b1c2d3e4f5"),
                                "G": bytes.fromhex("00112233445566778899aabbccddeeff")}


def test_a_keys_file_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "keys"
    path.write_text("node3 000102030405060708090a0b0c0d0e0f\n")
    os.chmod(path, 0o600)
    assert read_keys(str(path)) == {"node3": bytes(range(16))}
    for mode in (0o640, 0o604, 0o660):
        os.chmod(path, mode)
        with pytest.raises(KeysFileError, match=f"mode {mode:04o}: group or others may use it"):
            read_keys(str(path))
    with pytest.raises(KeysFileError, match="No such file"):
        read_keys(str(tmp_path / "absent"))
