"""The listener's decisions (http_rules.py) against gateway/contract/vectors/http_requests.jsonl, which every
gateway runs; the bytes on a real socket: gateway/conformance/test_http_fuzz.py."""

import json
from pathlib import Path

import pytest

from telemetry_gateway.http_rules import Request, decide, listener

VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors" / "http_requests.jsonl"
CASES = [json.loads(line) for line in VECTORS.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("case", CASES, ids=[case["note"] for case in CASES])
def test_http_request_vectors(case):
    r = case["request"]
    request = Request(r["method"], r["target"], r["version"], tuple(r["hosts"]), r["content_length"],
                      r["transfer_encoding"])
    assert decide(request, listener(case["listen"], case["host_names"])) == (case["status"], case.get("serve"))
