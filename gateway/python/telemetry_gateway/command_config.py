"""The configuration a command runs with: the TOML file (--config, TELEMETRY_CONFIG or the default path) with the
command line's flags over it (gateway/contract/config.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .config import Config, load_config

DEFAULT_CONFIG = "/etc/telemetry-gateway/config.toml"


def add_config_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help=f"TOML file (env TELEMETRY_CONFIG; default {DEFAULT_CONFIG} if it exists)")
    p.add_argument("--port", action="append", metavar="PATH[@BAUD]", help="serial port, repeatable "
                   "(replaces [serial] ports; a csv port needs the config file)")
    p.add_argument("--spool", metavar="PATH", help="spool file ([spool] path)")
    p.add_argument("--hosts", help="Cassandra contact points, comma-separated ([cassandra] hosts)")
    p.add_argument("--keyspace", help="[cassandra] keyspace")
    p.add_argument("--metrics-listen", metavar="HOST:PORT", help="[metrics] listen; \"\" turns it off")
    p.add_argument("--log-level", help="[log] level")


def config_from(args: argparse.Namespace) -> Config:
    path = args.config or os.environ.get("TELEMETRY_CONFIG") or (DEFAULT_CONFIG if Path(DEFAULT_CONFIG).exists()
                                                                 else None)
    overrides: dict[str, dict[str, object]] = {}
    pairs = [("serial", "ports", args.port), ("spool", "path", args.spool), ("cassandra", "hosts", args.hosts),
             ("cassandra", "keyspace", args.keyspace), ("metrics", "listen", args.metrics_listen),
             ("log", "level", args.log_level)]
    for section, key, value in pairs:
        if value is not None:
            overrides.setdefault(section, {})[key] = value
    return load_config(path, overrides=overrides)
