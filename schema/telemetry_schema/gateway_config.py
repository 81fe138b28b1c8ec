"""migrate --config: where the schema goes, read from a gateway's config file (config.schema.json, [cassandra])."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

# The gateway config's [cassandra] keys that say where the schema goes (config.schema.json), by their variable.
CONFIG_KEYS = ("hosts", "port", "keyspace", "credentials_file", "tls_ca", "tls_cert", "tls_key")


def config_env(cassandra: dict) -> dict[str, str]:
    """A gateway config's [cassandra] section as the TELEMETRY_CASSANDRA_* variables it stands for (lists
    comma-joined); unset and empty keys are left out."""
    env = {}
    for key in CONFIG_KEYS:
        value = cassandra.get(key)
        if value in (None, "", []):
            continue
        env[f"TELEMETRY_CASSANDRA_{key.upper()}"] = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return env


def settings_env(config: Path | None) -> dict[str, str]:
    """The variables, over the config's values: the environment overrides the file, as for the gateway."""
    env = {}
    if config is not None:
        with open(config, "rb") as f:
            env = config_env(tomllib.load(f).get("cassandra", {}))
    env.update({name: value for name, value in os.environ.items() if value})
    return env
