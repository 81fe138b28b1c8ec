"""A simulated sensor board: the lines real boards print (v1 frames, the room board's CSV), from models of
plausible readings, written to a pseudo-terminal, a file or stdout. Written from firmware/protocol/PROTOCOL.md,
independent of any gateway."""

from .frame_encoder import crc16_ccitt_false, encode_frame, format_value
from .greenhouse_model import greenhouse_reading
from .room_board import room_csv_line, room_reading

__all__ = ["crc16_ccitt_false", "encode_frame", "format_value", "greenhouse_reading", "room_csv_line",
           "room_reading"]
