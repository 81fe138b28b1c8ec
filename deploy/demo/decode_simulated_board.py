"""Demo step: a simulated greenhouse board's serial output (frames, a corrupted line, a status line, a legacy JSON
line) through the frame codec, with what the gateway would store or count."""

import random
import time
from collections import Counter

from telemetry_gateway.frame import Frame, Reject, Status, decode_line, encode_frame
from telemetry_gateway.greenhouse_model import greenhouse_reading

rng = random.Random(7)
now_ms = int(time.time() * 1000)
lines = [b"\xff\x00boot noise# base station ready, radio ok\n", b"# base station ready, radio ok\n"]
for seq in range(6):
    t_ms = now_ms - (5 - seq) * 3_600_000
    line = encode_frame("G", (65533 + seq) % 65536, greenhouse_reading(t_ms, rng), t=t_ms)
    if seq == 3:  # a byte flipped on the wire
        line = line.replace(b"temp_in=", b"temp_in=9", 1)
    lines.append(line)
lines.append(b'{"source": "G","destination": "C","temperaturein": 11.77,"temperatureout": 10.43,'
             b'"temperaturecheck": 15.00,"humidity": 46.00,"light": 57,"action": "N"}\n')

outcome = Counter()
for line in lines:
    result = decode_line(line)
    if isinstance(result, Frame):
        outcome["frames"] += 1
        values = ", ".join(f"{k}={v:g}" for k, v in result.values)
        print(f"  frame   {result.format:6} source={result.source} seq={result.seq} t={result.t}  {values}")
    elif isinstance(result, Status):
        outcome["status lines"] += 1
        print(f"  status  {result.text}")
    else:
        assert isinstance(result, Reject)
        outcome[f"rejected ({result.reason})"] += 1
        print(f"  reject  {result.reason:10} {line[:60]!r}")
print("frames from a simulated board decoded: " + ", ".join(f"{n} {what}" for what, n in outcome.items()))
