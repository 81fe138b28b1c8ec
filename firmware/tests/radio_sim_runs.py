"""scripts/radio-sim runs for the tests that put the real gateway behind it: started paced to real time on a pty,
the summary line read back, and what landed in Cassandra per source."""

import re
import subprocess
from collections import defaultdict
from datetime import timezone
from pathlib import Path

from telemetry_conformance import utc_days_around_now, wait_for

RADIO_SIM = Path(__file__).resolve().parents[1] / "scripts" / "radio-sim"
SUMMARY = re.compile(r"simulated_ms=(\d+) delivered=(\d+) lost=(\d+) dup_dropped=(\d+) acks_lost=(\d+) "
                     r"collisions=(\d+) max_rt=(\d+) forged=(\d+) replayed=(\d+)")
SUMMARY_FIELDS = ["simulated_ms", "delivered", "lost", "dup_dropped", "acks_lost", "collisions", "max_rt", "forged",
                  "replayed"]


def start_radio_sim(link: Path, trace: Path, *args: str) -> subprocess.Popen:
    """radio-sim paced to real time with the base station on a pty at `link`; returns once the link exists (the
    pty keeps what the base station writes until the gateway reads it)."""
    sim = subprocess.Popen([str(RADIO_SIM), "-r", "--pty-link", str(link), "--trace", str(trace), *args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: link.is_symlink() or sim.poll() is not None, 300, "radio-sim's pty link")
    assert link.is_symlink(), sim.communicate()[1]
    return sim


def finish(sim: subprocess.Popen) -> dict[str, int]:
    """Waits for the run's end and returns its summary line as {field: count}."""
    _, stderr = sim.communicate(timeout=300)
    assert sim.returncode == 0, stderr
    match = SUMMARY.fullmatch(stderr.strip().splitlines()[-1])
    assert match, stderr
    return dict(zip(SUMMARY_FIELDS, map(int, match.groups())))


def stored_values(session, source: str) -> list[dict[str, float]]:
    """The frames stored for source, oldest first, as {metric: value} (a frame's metrics share its ts)."""
    by_ts: dict[int, dict[str, float]] = defaultdict(dict)
    for day in utc_days_around_now():
        for row in session.execute("SELECT metric, ts, value FROM readings WHERE source = %s AND day = %s",
                                   [source, day]):
            by_ts[int(row.ts.replace(tzinfo=timezone.utc).timestamp() * 1000)][row.metric] = row.value
    return [by_ts[ts] for ts in sorted(by_ts)]


def in_frame_order(values: dict[str, float]) -> dict[str, float]:
    order = ["temp_in", "temp_out", "humidity", "light", "vbat"]
    return {key: values[key] for key in sorted(values, key=order.index)}
