"""The one way the project's Python code connects to Cassandra (gateway, schema runner, tests, benchmarks,
analytics, demo): contact points, credentials and TLS from arguments, or from the TELEMETRY_CASSANDRA_* variables.

TLS: given a CA file, the connection is encrypted and the node's certificate is verified against that CA (and the
address against the certificate); a client certificate and its key are presented to nodes that require one.
Errors name the setting or the file, never a password.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from cassandra import AuthenticationFailed
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable

from .settings import (DEFAULT_PORT, ENV_PREFIX, CredentialsFileError, TlsFileError, check_settings,  # noqa: F401
                       read_credentials_file, settings_from_env, split_hosts, tls_context)

PROTOCOL_VERSION = 5
# Set here from the arguments; passed as driver options too they would quietly replace hosts, credentials or TLS.
OWN_OPTIONS = frozenset({"contact_points", "auth_provider", "ssl_context", "ssl_options"})


def login_refused(error: BaseException) -> bool:
    """The nodes answered and refused the login (wrong or missing credentials), as opposed to not answering."""
    if isinstance(error, AuthenticationFailed):
        return True
    errors = error.errors if isinstance(error, NoHostAvailable) else None
    return bool(errors) and all(isinstance(e, AuthenticationFailed) for e in errors.values())


def cluster_options(hosts: str | Iterable[str], port: int = DEFAULT_PORT, username: str | None = None,
                    password: str | None = None, tls_ca: str | None = None, tls_cert: str | None = None,
                    tls_key: str | None = None, **driver_options: Any) -> dict[str, Any]:
    """The keyword arguments of cassandra.cluster.Cluster for these settings (protocol v5 unless driver_options
    say otherwise); ValueError on settings that do not go together."""
    clash = OWN_OPTIONS & driver_options.keys()
    if clash:
        raise TypeError(f"set {', '.join(sorted(clash))} through connect_cluster's own arguments")
    check_settings(port, username, password, tls_ca, tls_cert, tls_key)
    return {"protocol_version": PROTOCOL_VERSION, **driver_options,
            "contact_points": split_hosts(hosts), "port": port,
            "auth_provider": PlainTextAuthProvider(username, password or "") if username else None,
            "ssl_context": tls_context(tls_ca, tls_cert, tls_key) if tls_ca else None}


def connect_cluster(hosts: str | Iterable[str], port: int = DEFAULT_PORT, username: str | None = None,
                    password: str | None = None, tls_ca: str | None = None, tls_cert: str | None = None,
                    tls_key: str | None = None, **driver_options: Any) -> Cluster:
    """A Cluster (not yet connected: call .connect()) for these hosts, credentials and TLS files; driver_options
    (execution_profiles, reconnection_policy, timeouts ...) go to the driver as they are."""
    return Cluster(**cluster_options(hosts, port, username, password, tls_ca, tls_cert, tls_key, **driver_options))


def cluster_from_env(default_hosts: str = "127.0.0.1", **driver_options: Any) -> Cluster:
    """connect_cluster with the TELEMETRY_CASSANDRA_* variables (see settings_from_env); default_hosts when
    TELEMETRY_CASSANDRA_HOSTS is unset."""
    return connect_cluster(**settings_from_env(os.environ, default_hosts), **driver_options)
