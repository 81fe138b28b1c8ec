"""Connecting to Cassandra the one way the project does: see connect.py."""

from .connect import TlsFileError, cluster_from_env, cluster_options, connect_cluster, settings_from_env

__all__ = ["TlsFileError", "cluster_from_env", "cluster_options", "connect_cluster", "settings_from_env"]
