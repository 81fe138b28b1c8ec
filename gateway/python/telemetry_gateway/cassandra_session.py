"""Connecting to Cassandra as configured, and the prepared statements the gateway writes with
(gateway/contract/cassandra-writes.md)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import astuple, dataclass

from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.policies import DCAwareRoundRobinPolicy, ReconnectionPolicy, TokenAwarePolicy
from cassandra.query import PreparedStatement
from telemetry_cassandra import TlsFileError, connect_cluster

from .backoff import backoff_s
from .config import CassandraConfig, read_credentials
from .config_error import ConfigError
from .contract_constants import STATEMENTS, contract_seconds


CONNECT_TIMEOUT_S = contract_seconds("connect_timeout_ms")  # the contract's, for every connection


@dataclass
class Statements:
    reading: PreparedStatement | str
    source_day: PreparedStatement | str
    latest: PreparedStatement | str
    day_change: PreparedStatement | str


class BackoffReconnectionPolicy(ReconnectionPolicy):
    """The driver reconnects to a node on the schedule that requests and serial ports retry on (backoff_s); the
    driver's default waits up to 10 minutes between attempts, and a gateway must be back within seconds."""

    def __init__(self, max_s: float) -> None:
        self.max_s = max_s

    def new_schedule(self) -> Iterator[float]:
        return (backoff_s(attempt, self.max_s) for attempt in itertools.count(1))


def build_cluster(config: CassandraConfig) -> Cluster:
    credentials = read_credentials(config)
    username, password = credentials or (None, None)
    profile = ExecutionProfile(
        # Token-aware: a single-partition batch goes straight to a replica of that partition.
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=config.local_dc)),
        consistency_level=ConsistencyLevel.name_to_value[config.consistency.upper()],
        request_timeout=config.request_timeout_s,
    )
    try:
        return connect_cluster(
            config.hosts, port=config.port, username=username, password=password,
            tls_ca=config.tls_ca or None, tls_cert=config.tls_cert or None, tls_key=config.tls_key or None,
            execution_profiles={EXEC_PROFILE_DEFAULT: profile},
            reconnection_policy=BackoffReconnectionPolicy(config.retry_max_s),
            connect_timeout=CONNECT_TIMEOUT_S, control_connection_timeout=CONNECT_TIMEOUT_S,
        )
    except TlsFileError as error:
        raise ConfigError(f"cassandra.{error.setting}", "unreadable", str(error)) from None


# The contract's statements (gateway/contract/statements.cql), as read from it.
CQL = Statements(**STATEMENTS)


def prepare(session: Session) -> Statements:
    statements = Statements(*(session.prepare(text) for text in astuple(CQL)))
    for statement in (statements.reading, statements.source_day, statements.latest, statements.day_change):
        statement.is_idempotent = True  # same reading, same key: safe for the driver to retry
    return statements


def schema_version(session: Session, keyspace: str) -> int:
    row = session.execute("SELECT max(version) AS v FROM schema_migrations WHERE scope = %s", [keyspace]).one()
    return row.v or 0
