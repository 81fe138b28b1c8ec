"""Decoder behaviour beyond the vectors: round trips of the simulated board's frames, robustness to any bytes."""

from hypothesis import given, settings, strategies as st

from telemetry_board_sim import encode_frame
from telemetry_gateway.frame import Frame, Reject, Status, decode_line


def test_encode_with_time_round_trips():
    line = encode_frame("logger1", 9, [("temp_in", -3.25)], t=1700000000123)
    assert decode_line(line) == Frame.of("v1", "logger1", 9, 1700000000123, (("temp_in", -3.25),))


sources = st.from_regex(r"[A-Za-z0-9_-]{1,32}", fullmatch=True)
keys = st.from_regex(r"[a-s][a-z0-9_]{0,15}", fullmatch=True)  # never "t"
# Readings as boards send them: a few decimals (subnormal doubles would need hundreds of digits).
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9).map(lambda x: round(x, 4))


@settings(max_examples=300)
@given(sources, st.integers(0, 65535), st.dictionaries(keys, finite, min_size=1, max_size=4))
def test_encode_decode_round_trip(source, seq, values):
    try:
        line = encode_frame(source, seq, list(values.items()))
    except ValueError:  # over 200 bytes: the encoder refuses rather than emit a line that is rejected
        return
    assert decode_line(line) == Frame.of("v1", source, seq, None, tuple(values.items()))


@settings(max_examples=1000)
@given(st.binary(max_size=260))
def test_decode_never_raises_on_bytes(data):
    result = decode_line(data)
    assert isinstance(result, (Frame, Status, Reject))


@settings(max_examples=500)
@given(st.data())
def test_a_corrupted_byte_never_yields_a_different_frame(data):
    line = encode_frame("G", data.draw(st.integers(0, 65535)), [("temp_in", data.draw(finite))])
    pos = data.draw(st.integers(0, len(line) - 2))
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != line[pos]))
    result = decode_line(line[:pos] + bytes([byte]) + line[pos + 1:])
    # One changed byte is either caught, or only touched the noise before '$' (which cannot happen at pos 0
    # unless it created a new '$'); a decoded frame must be the original one.
    if isinstance(result, Frame):
        assert result == decode_line(line)



# The common-frame shortcut must agree with the numbered steps on every line, valid or not.
_pairs = st.lists(st.tuples(st.sampled_from(["t", "a", "temp_in", "b2", "A", "x" * 17]),
                            st.sampled_from(["1", "-2.5", "+0.0", "1e3", "12345678901234567", "", "1."])),
                  max_size=4)


@given(st.sampled_from(["T1", "T2", "T1 "]), st.sampled_from(["G", "sim_1", "bad source", "x" * 33]),
       st.sampled_from(["0", "65535", "65536", "99999", "007"]), _pairs, st.booleans())
def test_the_common_frame_shortcut_agrees_with_the_steps(version, source, seq, pairs, good_crc):
    from telemetry_gateway.frame import _decode_v1, _decode_v1_steps, crc16_ccitt_false
    body = ",".join([version, source, seq] + [f"{k}={v}" for k, v in pairs]).encode()
    crc = crc16_ccitt_false(body) ^ (0 if good_crc else 1)
    frame = b"$" + body + b"*" + f"{crc:04X}".encode()
    assert _decode_v1(frame) == _decode_v1_steps(frame)
