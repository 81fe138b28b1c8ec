"""Fixtures the conformance scenarios share; a scenario imports those it uses (pytest finds them by name)."""

from __future__ import annotations

import pytest

from conftest import connect, migrate
from .gateways import GatewayUnderTest


@pytest.fixture
def keyspace(cql, fresh_keyspace):
    """A fresh keyspace with the schema applied (schema/migrate), dropped afterwards."""
    assert migrate("--keyspace", fresh_keyspace).returncode == 0
    return fresh_keyspace


@pytest.fixture
def db(keyspace, cassandra_node):
    """A session on the test's keyspace, for checking what landed."""
    cluster = connect(cassandra_node)
    yield cluster.connect(keyspace)
    cluster.shutdown()


@pytest.fixture
def gateways():
    """Gateways a test starts; any still running at the end is killed."""
    started: list[GatewayUnderTest] = []
    yield started
    for gateway in started:
        if gateway.process is not None and gateway.process.poll() is None:
            gateway.kill()
