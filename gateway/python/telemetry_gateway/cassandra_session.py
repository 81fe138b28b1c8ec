"""Connecting to Cassandra as configured, and the prepared statements the gateway writes with."""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from cassandra import ConsistencyLevel
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.policies import DCAwareRoundRobinPolicy, ExponentialReconnectionPolicy, TokenAwarePolicy
from cassandra.query import PreparedStatement

from .config import CassandraConfig, read_credentials


@dataclass
class Statements:
    reading: PreparedStatement
    source_day: PreparedStatement
    latest: PreparedStatement
    day_change: PreparedStatement


def build_cluster(config: CassandraConfig) -> Cluster:
    credentials = read_credentials(config)
    ssl_context = None
    if config.tls_ca:
        ssl_context = ssl.create_default_context(cafile=config.tls_ca)  # verifies the server certificate
        if config.tls_cert:
            ssl_context.load_cert_chain(config.tls_cert, config.tls_key)
    profile = ExecutionProfile(
        # Token-aware: a single-partition batch goes straight to a replica of that partition.
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=config.local_dc)),
        consistency_level=ConsistencyLevel.name_to_value[config.consistency.upper()],
        request_timeout=config.request_timeout_s,
    )
    return Cluster(
        list(config.hosts), port=config.port, protocol_version=5,
        auth_provider=PlainTextAuthProvider(*credentials) if credentials else None,
        ssl_context=ssl_context, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        # The driver's default waits up to 10 minutes between reconnects; a gateway must be back within seconds.
        reconnection_policy=ExponentialReconnectionPolicy(base_delay=0.5, max_delay=config.retry_max_s),
        connect_timeout=5, control_connection_timeout=5,
    )


def prepare(session: Session) -> Statements:
    statements = Statements(
        reading=session.prepare("INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)"),
        source_day=session.prepare("INSERT INTO source_days (day, source) VALUES (?, ?)"),
        # The reading's own time as write timestamp: an older reading replayed later never wins.
        latest=session.prepare("INSERT INTO latest (source, metric, ts, value) VALUES (?, ?, ?, ?) "
                               "USING TIMESTAMP ?"),
        # For incremental analytics (schema/002): which partitions were written, by hour of writing.
        day_change=session.prepare("INSERT INTO day_changes (bucket, day, source, written_at) VALUES (?, ?, ?, ?)"),
    )
    for statement in (statements.reading, statements.source_day, statements.latest, statements.day_change):
        statement.is_idempotent = True  # same reading, same key: safe for the driver to retry
    return statements


def schema_version(session: Session, keyspace: str) -> int:
    row = session.execute("SELECT max(version) AS v FROM schema_migrations WHERE scope = %s", [keyspace]).one()
    return row.v or 0
