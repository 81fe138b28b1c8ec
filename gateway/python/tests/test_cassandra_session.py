"""The gateway's Cluster as configured: the contract's statements, the driver reconnects on the one backoff
schedule, and the options the gateway sets reach the driver (no connection is made)."""

import itertools
import re
from pathlib import Path

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT

from telemetry_gateway.cassandra_session import CQL, BackoffReconnectionPolicy, build_cluster
from telemetry_gateway.config import ConfigError, load_config


CONTRACT = Path(__file__).resolve().parents[2] / "contract" / "statements.cql"


def test_the_statements_are_the_contracts():
    declared = re.findall(r"^-- name: (\w+)\n([^;]+);", CONTRACT.read_text(encoding="utf-8"), re.M)
    assert [(name, " ".join(text.split())) for name, text in declared] == list(vars(CQL).items())
    assert [name for name, _ in declared] == ["reading", "source_day", "latest", "day_change"]


def first_delays(policy, n):
    return list(itertools.islice(policy.new_schedule(), n))


def test_driver_reconnects_back_off_like_requests_and_serial_ports():
    assert first_delays(BackoffReconnectionPolicy(max_s=10), 8) == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 10, 10])


def test_reconnect_delays_stop_growing_at_retry_max_and_never_end():
    assert first_delays(BackoffReconnectionPolicy(max_s=1), 1000)[2:] == pytest.approx([0.8] + [1.0] * 997)


def test_each_schedule_starts_again_from_the_shortest_delay():
    policy = BackoffReconnectionPolicy(max_s=10)
    first_delays(policy, 5)
    assert first_delays(policy, 2) == pytest.approx([0.2, 0.4])


def test_build_cluster_passes_the_configured_options_to_the_driver():
    config = load_config(None, env={"TELEMETRY_CASSANDRA_HOSTS": "127.0.0.7,127.0.0.8",
                                    "TELEMETRY_CASSANDRA_RETRY_MAX_S": "2", "TELEMETRY_CASSANDRA_CONSISTENCY": "one"})
    cluster = build_cluster(config.cassandra)
    assert cluster.contact_points == ["127.0.0.7", "127.0.0.8"] and cluster.protocol_version == 5
    assert first_delays(cluster.reconnection_policy, 5) == pytest.approx([0.2, 0.4, 0.8, 1.6, 2.0])
    profile = cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT]
    assert profile.consistency_level == ConsistencyLevel.ONE
    assert profile.request_timeout == config.cassandra.request_timeout_s
    assert cluster.ssl_context is None and cluster.auth_provider is None


def test_an_unreadable_tls_ca_is_a_config_error(tmp_path):
    config = load_config(None, env={"TELEMETRY_CASSANDRA_TLS_CA": str(tmp_path / "missing-ca.crt")})
    with pytest.raises(ConfigError) as refused:
        build_cluster(config.cassandra)
    assert (refused.value.key, refused.value.rule) == ("cassandra.tls_ca", "unreadable")
