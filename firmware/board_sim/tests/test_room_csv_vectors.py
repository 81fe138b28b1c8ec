"""The simulated room board prints, byte for byte, the good lines of firmware/protocol/vectors/room_csv.json that a
real room board can print (`sprintf("%d,%s")` with a two-decimal temperature, then CR LF or LF), for the values
those vectors say a gateway decodes them to."""

import json
import re
from pathlib import Path

import pytest

from telemetry_board_sim import room_csv_line

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "room_csv.json")
                     .read_text(encoding="ascii"))
_BOARD_FORM = re.compile(r"(?:[0-9]|[1-9][0-9]|100),-?[0-9]+\.[0-9]{2}(\r\n|\n)")
PRINTABLE = [case for case in VECTORS["cases"]
             if case["expect"]["kind"] == "frame" and "columns" not in case and _BOARD_FORM.fullmatch(case["line"])]


def test_the_vectors_hold_lines_the_board_prints():
    endings = {_BOARD_FORM.fullmatch(case["line"])[1] for case in PRINTABLE}
    assert len(PRINTABLE) >= 4 and endings == {"\r\n", "\n"}
    assert any(dict(case["expect"]["values"])["temperature"] < 0 for case in PRINTABLE)


@pytest.mark.parametrize("case", PRINTABLE, ids=[case["name"] for case in PRINTABLE])
def test_the_simulator_prints_the_vector_line_for_its_decoded_values(case):
    assert VECTORS["columns"] == ["light", "temperature"]
    values = dict(case["expect"]["values"])
    ending = _BOARD_FORM.fullmatch(case["line"])[1].encode("ascii")
    light = values["light"]
    assert light.is_integer()
    assert room_csv_line(int(light), values["temperature"], ending) == case["line"].encode("ascii")
