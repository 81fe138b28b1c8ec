"""A smoke run of deploy/pi/footprint (seconds, not its 1 or 10 minutes), Cassandra unreachable: both gateways are
measured from /proc and a row of figures is printed for each, with the frames counted (accepted, written,
committed) and the log's bytes, and the unwritten frames are pointed out."""

from __future__ import annotations

import os
import re
import subprocess

from pi_units import PI


def test_footprint_prints_figures_for_each_gateway(tmp_path):
    result = subprocess.run([str(PI / "footprint"), "--seconds", "3", "--warm-up", "1", "--policies", "batch"],
                            env=dict(os.environ, TELEMETRY_CASSANDRA_PORT="1", TELEMETRY_RESULTS_DIR=str(tmp_path)),
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    [kept] = tmp_path.glob("????-??-??-footprint.txt")  # the dated results file (deploy/setup/dated-results)
    assert kept.read_text().endswith(result.stdout)
    for gateway in ("python", "node"):
        row = re.search(rf"^\| {gateway} \| batch \| ([\d.]+) \| ([\d.]+) / ([\d.]+) \| ([\d,]+) B "
                        rf"\| [\d,]+ B \| (\d+) \| 0 \| (\d+) \| ([\d,.]+) B \|$", result.stdout, re.M)
        assert row, result.stdout
        cpu, rss_mean, rss_max, per_frame, frames, committed, _log = row.groups()
        assert 0 < float(cpu) < 100 and 10 < float(rss_mean) <= float(rss_max) < 500
        assert int(frames) >= 12  # 6 frames/s for 3 s, give or take a second
        assert int(committed) > 0  # batch: every frame, as it comes
        assert f"note: {gateway}/batch wrote 0 of {frames} frames to Cassandra" in result.stdout
