"""The conformance harness's gateway command (GATEWAY_COMMAND, shlex-split) and Prometheus reader: the benchmark
starts and reads a gateway exactly as the harness does, whichever implementation it is."""

from __future__ import annotations

import sys

from bench_settings import ROOT

sys.path.insert(0, str(ROOT / "gateway" / "conformance"))
from harness import gateway_command, scrape_metrics  # noqa: E402

__all__ = ["gateway_command", "scrape_metrics"]
