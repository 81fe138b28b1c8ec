"""Fixtures the conformance scenarios share; a scenario imports those it uses (pytest finds them by name)."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from .boards import Board
from .commands import gateways_under_test
from .gateways import GatewayUnderTest
from .local_node import connect, migrate


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


@pytest.fixture
def side_by_side(tmp_path, keyspace, cassandra_node, gateways, monkeypatch):
    """For a module with EVERY_GATEWAY_INSIDE: every gateway under test (gateways_under_test()) configured
    in a folder of its own with a board of its own, on the test's keyspace. configure(**options) → {name: (board,
    gateway, start)}, options as GatewayUnderTest.configure's; start() starts that gateway (again). A test that runs
    several configurations side by side calls configure once per configuration with a tag of its own: the rigs are
    then named "name-tag" (e.g. "node-batch")."""
    under_test = gateways_under_test()  # read before a start() sets GATEWAY_COMMAND to one of them

    def configure(tag: str = "", **options) -> dict[str, tuple[Board, GatewayUnderTest, Callable[[], None]]]:
        rigs = {}
        for gateway_name, command in under_test.items():
            name = f"{gateway_name}-{tag}" if tag else gateway_name
            folder = tmp_path / name
            folder.mkdir()
            board = Board(folder / "ttyUSB0")
            gateway = GatewayUnderTest.configure(folder, [board.link], keyspace, cassandra_node, **options)
            gateways.append(gateway)

            def start(gateway=gateway, command=command) -> None:
                monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
                gateway.start()
            rigs[name] = (board, gateway, start)
        return rigs
    return configure
