"""The room board's CSV lines against firmware/protocol/vectors/room_csv.json, and a CSV port's lines through the
line handler: frames of the port's source, or counted rejects."""

import json
import math
import queue
from pathlib import Path

import pytest

from telemetry_gateway.config import Config
from telemetry_gateway.contract_constants import REJECT_REASONS
from telemetry_gateway.frame import Frame, Reject
from telemetry_gateway.ingest import Ingest
from telemetry_gateway.line_handler import LineHandler
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.room_csv import decode_csv_line, line_decoder
from telemetry_gateway.serial_port_entries import SerialPort
from telemetry_gateway.spool import Spool

VECTORS = json.loads((Path(__file__).resolve().parents[3] / "firmware" / "protocol" / "vectors" / "room_csv.json")
                     .read_text(encoding="ascii"))
CSV_REJECT_REASONS = REJECT_REASONS["csv"]  # an over-long CSV line is too_long like any line


def as_vector(decoded):
    if isinstance(decoded, Frame):
        return {"kind": "frame", "format": decoded.format, "source": decoded.source, "seq": decoded.seq,
                "t": decoded.t, "values": [[k, v] for k, v in decoded.values]}
    return {"kind": "reject", "reason": decoded.reason}


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_decode(case):
    columns = tuple(case.get("columns", VECTORS["columns"]))
    got = as_vector(decode_csv_line(case["line"].encode("latin-1"), VECTORS["source"], columns))
    assert got == case["expect"]
    if got["kind"] == "frame":  # == treats -0.0 and 0.0 alike; the sign of zero is part of the value
        for (_, g), (_, e) in zip(got["values"], case["expect"]["values"]):
            assert math.copysign(1, g) == math.copysign(1, e)


def test_vectors_cover_every_csv_reject_reason_and_too_long():
    covered = {c["expect"]["reason"] for c in VECTORS["cases"] if c["expect"]["kind"] == "reject"}
    assert covered == set(CSV_REJECT_REASONS) | {"too_long"}


def test_only_a_csv_port_decodes_csv():
    csv_port = SerialPort("/dev/ttyACM0", 9600, "csv", "room", ("light", "temperature"))
    assert line_decoder(csv_port)(b"57,21.50") == Frame.of("csv", "room", None, None,
                                                            (("light", 57.0), ("temperature", 21.5)))
    assert line_decoder(SerialPort("/dev/ttyUSB0", 115200))(b"57,21.50") == Reject("no_frame")


def test_a_csv_ports_reads_become_frames_and_counted_rejects():
    metrics, frames = Metrics(), queue.Queue()
    port = SerialPort("/dev/ttyACM0", 9600, "csv", "room", ("light", "temperature"))
    handler = LineHandler(port.path, frames, metrics, decode=line_decoder(port))
    assert handler.feed(b"57,21.50\r\n0,-3.25\n57,nan\r\n,1\n57\n")
    received = frames.get_nowait()
    assert [f.values for f in received.frames] == [(("light", 57.0), ("temperature", 21.5)),
                                                   (("light", 0.0), ("temperature", -3.25))]
    assert {f.source for f in received.frames} == {"room"} and {f.seq for f in received.frames} == {None}
    rejects = {reason: metrics.registry.get_sample_value("telemetry_gateway_rejects_total", {"reason": reason})
               for reason in CSV_REJECT_REASONS}
    assert rejects == {"csv_column_count": 1.0, "csv_empty_field": 1.0, "csv_bad_number": 1.0}
    assert metrics.registry.get_sample_value("telemetry_gateway_lines_read_total", {"input": port.path}) == 5.0
    assert not handler.feed(b"x,y\n")  # a read of rejects only hands nothing over
    assert frames.empty()


def test_csv_frames_have_no_seq_tracking_and_are_stamped_on_receipt(tmp_path):
    """The same reading twice is two readings; lines of one read get strictly increasing receipt stamps; the seq
    state of a v1 board with the same source name is left alone."""
    spool, metrics = Spool(tmp_path / "spool.sqlite"), Metrics()
    try:
        ingest = Ingest(Config(), spool, metrics, lambda: None)
        now = 1_780_000_000_000
        reading = decode_csv_line(b"57,21.50", "room", ("light", "temperature"))
        assert ingest._acceptor.accept(Frame.of("v1", "room", 5, None, (("a", 1.0),)), now) is not None
        stored = [ingest._acceptor.accept(reading, now), ingest._acceptor.accept(reading, now), ingest._acceptor.accept(reading, now + 1)]
        assert [new.ts_ms for new in stored] == [now + 1, now + 2, now + 3]
        assert all(new.source == "room" and new.received_ms in (now, now + 1) for new in stored)
        assert ingest._acceptor.accept(Frame.of("v1", "room", 5, None, (("a", 1.0),)), now + 2) is None  # still a duplicate
        assert ingest._acceptor.accept(Frame.of("v1", "room", 6, None, (("a", 2.0),)), now + 3) is not None
        for name in ("duplicates", "seq_missing_frames", "board_restarts", "seq_conflicts"):
            expected = 1.0 if name == "duplicates" else None
            assert metrics.registry.get_sample_value(f"telemetry_gateway_{name}_total", {"source": "room"}) == \
                expected, name
    finally:
        spool.close()
