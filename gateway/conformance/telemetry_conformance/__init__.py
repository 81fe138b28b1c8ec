"""The gateway conformance kit: simulated boards on real pseudo-terminals, a gateway process under test (any
implementation: GATEWAY_COMMAND), its Prometheus metrics, and what landed in Cassandra. Used by the conformance
scenarios (gateway/conformance), the other suites that run a gateway, the benchmark and deploy/pi/footprint."""

from .boards import Board, PacedWriter, Stream, TimedWriter, boards_on_pty
from .commands import DEFAULT_COMMAND, GATEWAY_COMMANDS, ROOT, gateway_command, gateways_under_test, running, stop
from .gateways import GatewayUnderTest, port_entry, toml_value
from .metrics import scrape_metrics
from .stored_rows import all_stored, assert_each_frame_once, stored_frames, stored_numbers, utc_days_around_now
from .waits import free_port, wait_for

__all__ = ["Board", "DEFAULT_COMMAND", "GATEWAY_COMMANDS", "GatewayUnderTest", "PacedWriter", "ROOT", "Stream",
           "TimedWriter", "all_stored", "assert_each_frame_once", "boards_on_pty", "free_port", "gateway_command", "gateways_under_test", "port_entry",
           "running", "scrape_metrics", "stop", "stored_frames", "stored_numbers", "toml_value", "utc_days_around_now", "wait_for"]
