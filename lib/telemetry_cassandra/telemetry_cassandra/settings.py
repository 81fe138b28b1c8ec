"""Connection settings without the driver: TELEMETRY_CASSANDRA_* variables, credentials files, TLS files and
the checks that they go together. Importable where the Cassandra driver is not installed (the Spark jobs' archive,
whose driver is the connector)."""

from __future__ import annotations

import ssl
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

ENV_PREFIX = "TELEMETRY_CASSANDRA_"
DEFAULT_PORT = 9042


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


def check_files(settings: Mapping[str, Any]) -> None:
    """settings_from_env's settings: ValueError on settings that do not go together or TLS files that cannot be
    used (what connect_cluster would find), without building a driver Cluster."""
    split_hosts(settings["hosts"])
    check_settings(settings["port"], settings["username"], settings["password"], settings["tls_ca"],
                   settings["tls_cert"], settings["tls_key"])
    if settings["tls_ca"]:
        tls_context(settings["tls_ca"], settings["tls_cert"], settings["tls_key"])
