"""Telemetry gateway: serial frames from sensor boards into Apache Cassandra."""
