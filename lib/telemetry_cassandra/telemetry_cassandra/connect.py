"""The one way the project's Python code connects to Cassandra (gateway, schema runner, tests, benchmarks,
analytics, demo): contact points, credentials and TLS from arguments, or from the TELEMETRY_CASSANDRA_* variables.

TLS: given a CA file, the connection is encrypted and the node's certificate is verified against that CA (and the
address against the certificate); a client certificate and its key are presented to nodes that require one.
Errors name the setting or the file, never a password.
"""

from __future__ import annotations

import os
import ssl
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from cassandra import AuthenticationFailed
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable

ENV_PREFIX = "TELEMETRY_CASSANDRA_"
DEFAULT_PORT = 9042
PROTOCOL_VERSION = 5
# Set here from the arguments; passed as driver options too they would quietly replace hosts, credentials or TLS.
OWN_OPTIONS = frozenset({"contact_points", "auth_provider", "ssl_context", "ssl_options"})


class CredentialsFileError(ValueError):
    """A credentials file that cannot be read ("unreadable") or lacks username/password strings ("required")."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason


def read_credentials_file(path: str) -> tuple[str, str]:
    """(username, password) from a TOML file of `username = "…"` and `password = "…"` (the gateway's
    credentials_file, deploy/local's admin.toml, systemd's LoadCredential=). The error names the file, never the
    password."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise CredentialsFileError("unreadable", f"cannot read credentials_file {path}: {error}") from None
    if not isinstance(data.get("username"), str) or not isinstance(data.get("password"), str):
        raise CredentialsFileError("required", f"credentials_file {path} needs username and password strings")
    return data["username"], data["password"]


def login_refused(error: BaseException) -> bool:
    """The nodes answered and refused the login (wrong or missing credentials), as opposed to not answering."""
    if isinstance(error, AuthenticationFailed):
        return True
    errors = error.errors if isinstance(error, NoHostAvailable) else None
    return bool(errors) and all(isinstance(e, AuthenticationFailed) for e in errors.values())


class TlsFileError(ValueError):
    """A TLS file that cannot be read or used; setting is "tls_ca" or "tls_cert" (the certificate and its key)."""

    def __init__(self, setting: str, text: str) -> None:
        super().__init__(text)
        self.setting = setting


def settings_from_env(env: Mapping[str, str], default_hosts: str = "127.0.0.1") -> dict[str, Any]:
    """connect_cluster's arguments from TELEMETRY_CASSANDRA_HOSTS (comma-separated), _PORT, _USERNAME, _PASSWORD
    (or _CREDENTIALS_FILE, when _USERNAME is unset), _TLS_CA, _TLS_CERT and _TLS_KEY. An empty variable counts as
    unset."""
    def get(name: str) -> str | None:
        return env.get(ENV_PREFIX + name) or None

    port_text = get("PORT")
    port = DEFAULT_PORT
    if port_text is not None:
        try:
            port = int(port_text)
        except ValueError:
            raise ValueError(f"{ENV_PREFIX}PORT must be a port number, not {port_text!r}") from None
    username, password = get("USERNAME"), get("PASSWORD")
    if username is None and get("CREDENTIALS_FILE"):
        username, password = read_credentials_file(get("CREDENTIALS_FILE"))
    return {"hosts": split_hosts(get("HOSTS") or default_hosts), "port": port,
            "username": username, "password": password,
            "tls_ca": get("TLS_CA"), "tls_cert": get("TLS_CERT"), "tls_key": get("TLS_KEY")}


def split_hosts(hosts: str | Iterable[str]) -> list[str]:
    """Contact points from "a,b" or from a list; a bare string is never split into characters."""
    items = hosts.split(",") if isinstance(hosts, str) else list(hosts)
    contact_points = [host.strip() for host in items if host.strip()]
    if not contact_points:
        raise ValueError(f"no Cassandra contact points given (hosts, env {ENV_PREFIX}HOSTS)")
    return contact_points


def check_settings(port: int, username: str | None, password: str | None, tls_ca: str | None,
                   tls_cert: str | None, tls_key: str | None) -> None:
    if not 1 <= port <= 65535:
        raise ValueError(f"Cassandra port must be 1-65535, not {port}")
    if password and not username:
        raise ValueError(f"a Cassandra password is given without a username ({ENV_PREFIX}USERNAME)")
    if bool(tls_cert) != bool(tls_key):
        given, missing = ("certificate", "key") if tls_cert else ("key", "certificate")
        raise ValueError(f"a TLS client {given} is given without its {missing}: tls_cert and tls_key go together "
                         f"({ENV_PREFIX}TLS_CERT, {ENV_PREFIX}TLS_KEY)")
    if tls_cert and not tls_ca:
        raise ValueError(f"a TLS client certificate needs tls_ca ({ENV_PREFIX}TLS_CA), the CA that the node's "
                         f"certificate is verified against")


def tls_context(tls_ca: str, tls_cert: str | None, tls_key: str | None) -> ssl.SSLContext:
    """Trusts tls_ca alone (not the system's CAs) to vouch for the node; presents tls_cert when given."""
    try:
        context = ssl.create_default_context(cafile=tls_ca)
    except (OSError, ssl.SSLError) as error:
        raise TlsFileError("tls_ca", f"cannot use TLS CA file {tls_ca}: {error}") from None
    if tls_cert:
        try:
            context.load_cert_chain(tls_cert, tls_key)
        except (OSError, ssl.SSLError) as error:
            raise TlsFileError("tls_cert", f"cannot use TLS client certificate {tls_cert} with key {tls_key}: "
                               f"{error}") from None
    return context


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
