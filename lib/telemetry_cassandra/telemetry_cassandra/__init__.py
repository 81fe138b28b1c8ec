"""Connecting to Cassandra the one way the project does: see connect.py. The settings (settings.py) import without
the Cassandra driver; the names that need it load it on first use."""

from .settings import (CredentialsFileError, TlsFileError, check_files, check_settings, read_credentials_file,
                       settings_from_env, split_hosts, tls_context)

_WITH_DRIVER = {"cluster_from_env", "cluster_options", "connect_cluster", "login_refused"}

__all__ = ["CredentialsFileError", "TlsFileError", "check_files", "check_settings", "cluster_from_env",
           "cluster_options", "connect_cluster", "login_refused", "read_credentials_file", "settings_from_env",
           "split_hosts", "tls_context"]


def __getattr__(name: str):
    if name in _WITH_DRIVER:
        from . import connect
        return getattr(connect, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
