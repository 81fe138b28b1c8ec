"""What the simulated boards must report, computed from the injected voltages and PROTOCOL.md, independently of
the firmware: shared by the simulator tests in this folder."""

import math

# scripts/radio-sim's sensor node n: analog inputs in mV at a 3.3 V supply (tests/sim/radio/radio_sim.c).
NODE_VCC_MV = 3300


def node_inputs(n: int) -> dict[str, int]:
    return {"temp_in": 1500 + 60 * n, "temp_out": 1700 - 40 * n, "light": 600 + 300 * n, "humidity": 1400 + 50 * n}


def ntc_celsius(count: float) -> float:
    """10 kΩ B=3950 NTC to ground under 10 kΩ, at ADC count `count`."""
    ohm = 10000.0 * count / (1023.0 - count)
    return 1.0 / (1.0 / 298.15 + math.log(ohm / 10000.0) / 3950.0) - 273.15


def humidity_percent(count: float, celsius: float) -> float:
    """HIH-4030 output at ADC count `count` of its supply, temperature-compensated (its datasheet's formula)."""
    return (count / 1023.0 - 0.16) / 0.0062 / (1.0546 - 0.00216 * celsius)


def assert_node_values(values: dict[str, float], n: int) -> None:
    """A radio node's frame carries what its inputs give, to within the ADC's rounding (a count and a half)."""
    mv = node_inputs(n)
    count = {key: volts * 1023 / NODE_VCC_MV for key, volts in mv.items()}
    assert list(values) == ["temp_in", "temp_out", "humidity", "light", "vbat"], values
    for key in ("temp_in", "temp_out"):
        assert ntc_celsius(count[key] + 1.5) <= values[key] <= ntc_celsius(count[key] - 1.5), (key, values)
    t = values["temp_in"]
    humidity = humidity_percent(count["humidity"] - 1.5, t) - 0.05, humidity_percent(count["humidity"] + 1.5, t) + 0.05
    assert humidity[0] <= values["humidity"] <= humidity[1], values
    assert abs(values["light"] - mv["light"] * 100 / NODE_VCC_MV) <= 1, values
    assert abs(values["vbat"] - NODE_VCC_MV / 1000) <= 0.015, values


METRICS = {1: ("temp_in", 2), 2: ("temp_out", 2), 3: ("temp_check", 2), 4: ("humidity", 1), 5: ("light", 0)}


def payload_frame(payload: bytes) -> tuple[str, int, dict[str, float]]:
    """A radio payload v1 (PROTOCOL.md 6.2) or v2 (8.2) as the gateway's frame: (source, seq, values in frame
    order)."""
    if payload[0] == 2:
        count, first, vbat = (len(payload) - 17) // 3, 11, payload[8:10]
        assert len(payload) == 17 + 3 * count and count <= 5, payload
    else:
        assert payload[0] == 1, payload
        count, first, vbat = payload[7], 8, payload[4:6]
        assert len(payload) == 8 + 3 * count, payload
    values = {}
    for i in range(count):
        record = payload[first + 3 * i:first + 3 * i + 3]
        name, decimals = METRICS[record[0]]
        values[name] = int.from_bytes(record[1:], "little", signed=True) / 10 ** decimals
    values["vbat"] = int.from_bytes(vbat, "little") / 1000
    return f"node{payload[1]}", int.from_bytes(payload[2:4], "little"), values


def payload_counter(payload: bytes) -> int:
    """A v2 payload's message counter (PROTOCOL.md 8.2)."""
    assert payload[0] == 2, payload
    return int.from_bytes(payload[4:8], "little")
