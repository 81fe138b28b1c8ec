"""The conformance harness's gateway command (GATEWAY_COMMAND, shlex-split: the bench's "custom" gateway) and
Prometheus reader: the benchmark starts and reads a gateway exactly as the harness does, whichever it is."""

from __future__ import annotations

import sys

from bench_settings import ROOT

sys.path.insert(0, str(ROOT / "gateway" / "conformance"))
from harness import GATEWAY_COMMANDS, gateway_command, scrape_metrics  # noqa: E402

__all__ = ["GATEWAY_COMMANDS", "gateway_command", "scrape_metrics"]
