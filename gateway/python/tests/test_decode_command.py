"""telemetry-gateway decode (decode_command.py): one JSON result per input line, the protocol vectors' `expect`,
in the exact text of the contract's vectors (gateway/contract/vectors/decode_text.jsonl); the differential fuzz
test (gateway/conformance/test_decoder_differential.py) runs it at scale."""

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from telemetry_gateway.decode_command import main

VECTORS = Path(__file__).resolve().parents[3] / "firmware" / "protocol" / "vectors"

CONTRACT_VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
TEXT_CASES = [json.loads(line) for line in (CONTRACT_VECTORS / "decode_text.jsonl").read_text("ascii").splitlines()]
# Whole lines under no options: the cases that can be run one after another in one process.
PLAIN_CASES = [case for case in TEXT_CASES if case["params"] == {"csv": False} and case["input"].endswith("\n")]


def decode(data: bytes, *args: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = main(list(args), stdin=io.BytesIO(data), stdout=out)
    return code, out.getvalue().splitlines()


def vector_cases(name):
    return json.loads((VECTORS / name).read_text(encoding="ascii"))


def as_stdin_line(line: str) -> bytes:
    data = line.encode("latin-1")
    return data if data.endswith(b"\n") else data + b"\n"


def assert_same_result(got: dict, expect: dict) -> None:
    assert got == expect
    if got["kind"] == "frame":  # == treats -0.0 and 0.0 alike
        assert [math.copysign(1, v) for _, v in got["values"]] == [math.copysign(1, v) for _, v in expect["values"]]


def test_the_decode_vectors_one_line_each():
    cases = vector_cases("decode.json")["cases"]
    code, out = decode(b"".join(as_stdin_line(c["line"]) for c in cases))
    assert code == 0 and len(out) == len(cases)
    for case, text in zip(cases, out):
        assert_same_result(json.loads(text), case["expect"])


@pytest.mark.parametrize("case", vector_cases("room_csv.json")["cases"], ids=lambda c: c["name"])
def test_the_room_csv_vectors_with_csv(case):
    doc = vector_cases("room_csv.json")
    columns = ",".join(case.get("columns", doc["columns"]))
    code, out = decode(as_stdin_line(case["line"]), "--csv", "--source", doc["source"], "--columns", columns)
    assert code == 0 and len(out) == 1
    assert_same_result(json.loads(out[0]), case["expect"])


@pytest.mark.parametrize("case", TEXT_CASES, ids=lambda c: c["name"])
def test_exact_text(case, tmp_path):
    """decode_text.jsonl: params.csv (with source and columns) and params.keys → the options; input → the exact
    output lines."""
    params = case["params"]
    args = ["--csv", "--source", params["source"], "--columns", params["columns"]] if params["csv"] else []
    if "keys" in params:
        keys = tmp_path / "keys"
        keys.touch(mode=0o600)
        keys.write_text("".join(f"{source} {key}\n" for source, key in params["keys"].items()))
        args += ["--keys", str(keys)]
    assert decode(case["input"].encode("latin-1"), *args) == (0, case["expect"])


@pytest.mark.parametrize(("args", "message"), [
    (["--source", "room"], "--source: only a --csv port has source"),
    (["--columns", "a"], "--columns: only a --csv port has columns"),
    (["--csv", "--columns", "a"], "--source: a csv port needs the source its lines are stored under"),
    (["--csv", "--source", "bad source", "--columns", "a"],
     "--source: \"bad source\" is not a source name ([A-Za-z0-9_-]{1,32})"),
    (["--csv", "--source", "room"], "--columns: a csv port needs the metric name of each field"),
    (["--csv", "--source", "room", "--columns", "light,t"],
     "--columns: \"t\" is not a metric name ([a-z][a-z0-9_]{0,15}, not t)"),
    (["--csv", "--source", "room", "--columns", "light,"],
     "--columns: \"\" is not a metric name ([a-z][a-z0-9_]{0,15}, not t)"),
    (["--csv", "--source", "room", "--columns", "a,b,a"], "--columns: \"a\" is listed twice"),
])
def test_usage_errors(args, message, capsys):
    assert decode(b"57,21.5\n", *args) == (2, [])
    assert capsys.readouterr().err == f"telemetry-gateway decode: {message}\n"


def test_unknown_options_and_help(capsys):
    assert decode(b"", "--bogus")[0] == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
    assert decode(b"", "--help")[0] == 0


def test_as_a_process_on_stdin_and_stdout():
    data = b"".join(case["input"].encode("latin-1") for case in PLAIN_CASES) * 1000
    want = [text for case in PLAIN_CASES for text in case["expect"]] * 1000
    done = subprocess.run([sys.executable, "-c", "import sys; from telemetry_gateway.decode_command import main; "
                           "sys.exit(main(sys.argv[1:]))"], input=data, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("ascii").splitlines() == want
