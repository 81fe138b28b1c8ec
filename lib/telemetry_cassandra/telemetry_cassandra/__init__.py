"""Connecting to Cassandra the one way the project does: see connect.py."""

from .connect import (CredentialsFileError, TlsFileError, cluster_from_env, cluster_options, connect_cluster,
                      login_refused, read_credentials_file, settings_from_env)

__all__ = ["CredentialsFileError", "TlsFileError", "cluster_from_env", "cluster_options", "connect_cluster",
           "login_refused", "read_credentials_file", "settings_from_env"]
