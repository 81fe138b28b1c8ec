"""An input's bytes through LineHandler: every line is counted once, as a frame, a status or a reject reason."""

import queue

from telemetry_board_sim import encode_frame
from telemetry_gateway.line_handler import LineHandler
from telemetry_gateway.metrics import Metrics


def handler():
    frames, metrics = queue.Queue(), Metrics()
    return LineHandler("/dev/ttyUSB0", frames, metrics), frames, metrics


def sample(metrics, name, **labels):
    return metrics.registry.get_sample_value(f"telemetry_gateway_{name}", labels) or 0.0


def test_a_cr_only_board_keeps_every_frame_of_a_line():
    h, frames, metrics = handler()
    lines = [encode_frame("G", seq, [("temp", 20 + seq)]).replace(b"\n", b"\r") for seq in range(3)]
    assert h.feed(b"".join(lines))
    assert [f.seq for f in frames.get_nowait().frames] == [0, 1, 2]
    assert sample(metrics, "lines_read_total", input="/dev/ttyUSB0") == 3


def test_a_partial_line_thrown_away_at_reopen_is_counted():
    h, frames, metrics = handler()
    frame = encode_frame("G", 1, [("temp", 20)])
    assert h.feed(frame + frame[:10])
    h.restart()  # the port was reopened: the 10 bytes belong to no frame
    h.restart()  # nothing more to count
    assert sample(metrics, "rejects_total", reason="partial_line") == 1
    assert sample(metrics, "lines_read_total", input="/dev/ttyUSB0") == 2  # the frame and the partial line
    assert not h.feed(frame[10:])  # its rest, alone: a line without its start (noise, no `$`)
    assert sample(metrics, "rejects_total", reason="no_frame") == 1
