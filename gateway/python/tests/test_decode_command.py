"""telemetry-gateway decode (decode_command.py): one JSON result per input line, the protocol vectors' `expect`,
in the exact text the Node gateway's decode writes too (gateway/node/test/decode-command.test.js has the same
TEXT_CASES); the differential fuzz test (gateway/conformance/test_decoder_differential.py) runs it at scale."""

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from telemetry_gateway.decode_command import main

VECTORS = Path(__file__).resolve().parents[3] / "firmware" / "protocol" / "vectors"

# Input line → the exact output line (shared with the Node test, character for character).
TEXT_CASES = [
    (b"$T1,G,10,temp_out=-0.0*DB8E",
     '{"kind":"frame","format":"v1","source":"G","seq":10,"t":null,"values":[["temp_out",-0.0]]}'),
    (b"$T1,logger1,42,t=1700000000123,temp_in=-3.25,humidity=88*7E33",
     '{"kind":"frame","format":"v1","source":"logger1","seq":42,"t":1700000000123,'
     '"values":[["temp_in",-3.25],["humidity",88.0]]}'),
    (b"$T1,G,7,a=0003300,b=+2.25,c=100000000000000000000,d=0.00001*ED5C",
     '{"kind":"frame","format":"v1","source":"G","seq":7,"t":null,'
     '"values":[["a",3300.0],["b",2.25],["c",1e+20],["d",1e-05]]}'),
    (b'{"source":"G","destination":"C","a":-0,"b":-0.0,"c":1e16,"d":1.5e-7,"e":123456789012345678901234567890,'
     b'"f":0.0001}',
     '{"kind":"frame","format":"legacy","source":"G","seq":null,"t":null,"values":[["a",0.0],["b",-0.0],'
     '["c",1e+16],["d",1.5e-07],["e",1.2345678901234568e+29],["f",0.0001]]}'),
    (b'{"source":"G","destination":"C","a":1e400}', '{"kind":"reject","reason":"bad_value"}'),
    (b"$T1,G,7,a=1e5*A691", '{"kind":"reject","reason":"bad_value"}'),
    (b'#\t radio \xe9\x7f\x01"\\ ok ', '{"kind":"status","text":"radio \\u00e9\\u007f\\u0001\\"\\\\ ok"}'),
    (b"", '{"kind":"reject","reason":"empty"}'),
]


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


@pytest.mark.parametrize(("line", "text"), TEXT_CASES)
def test_exact_text(line, text):
    assert decode(line + b"\n") == (0, [text])


def test_each_lf_ends_one_line_and_a_cr_elsewhere_stays_in_it():
    code, out = decode(b"#a\r\n\n#b\rc\r\n#d\r\r\n \r\n#last\r")
    assert code == 0
    assert [json.loads(text) for text in out] == [
        {"kind": "status", "text": "a"},  # CRLF: the CR belongs to the ending
        {"kind": "reject", "reason": "empty"},  # an empty line is a line here
        {"kind": "status", "text": "b\rc"},  # a CR inside the line: not an ending (the assembler would split)
        {"kind": "status", "text": "d"},  # the command drops one CR, the decoder (step 1) the other
        {"kind": "reject", "reason": "empty"},
        {"kind": "status", "text": "last"},  # no LF at the end: still a line
    ]
    assert decode(b"") == (0, [])
    assert decode(b"#x\n") == (0, ['{"kind":"status","text":"x"}'])  # a final LF makes no extra line


def test_a_csv_port_reads_only_csv():
    code, out = decode(b"57, 21.50\r\n$T1,G,10,temp_out=-0.0*DB8E\n", "--csv", "--source", "room",
                       "--columns", "light, temp")
    assert code == 0 and out == [
        '{"kind":"frame","format":"csv","source":"room","seq":null,"t":null,"values":[["light",57.0],["temp",21.5]]}',
        '{"kind":"reject","reason":"csv_column_count"}']


@pytest.mark.parametrize(("args", "message"), [
    (["--source", "room"], "--source: only a --csv port has source"),
    (["--columns", "a"], "--columns: only a --csv port has columns"),
    (["--csv", "--columns", "a"], "--source: a csv port needs the source its lines are stored under"),
    (["--csv", "--source", "bad source", "--columns", "a"],
     "--source: 'bad source' is not a source name ([A-Za-z0-9_-]{1,32})"),
    (["--csv", "--source", "room"], "--columns: a csv port needs the metric name of each field"),
    (["--csv", "--source", "room", "--columns", "light,t"],
     "--columns: 't' is not a metric name ([a-z][a-z0-9_]{0,15}, not t)"),
    (["--csv", "--source", "room", "--columns", "light,"],
     "--columns: '' is not a metric name ([a-z][a-z0-9_]{0,15}, not t)"),
    (["--csv", "--source", "room", "--columns", "a,b,a"], "--columns: 'a' is listed twice"),
])
def test_usage_errors(args, message, capsys):
    assert decode(b"57,21.5\n", *args) == (2, [])
    assert capsys.readouterr().err == f"telemetry-gateway decode: {message}\n"


def test_unknown_options_and_help(capsys):
    assert decode(b"", "--bogus")[0] == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
    assert decode(b"", "--help")[0] == 0


def test_as_a_process_on_stdin_and_stdout():
    data = b"".join(line + b"\n" for line, _ in TEXT_CASES) * 1000
    done = subprocess.run([sys.executable, "-c", "import sys; from telemetry_gateway.decode_command import main; "
                           "sys.exit(main(sys.argv[1:]))"], input=data, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("ascii").splitlines() == [text for _, text in TEXT_CASES] * 1000
