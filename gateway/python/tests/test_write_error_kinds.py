"""error_kind maps the driver's real exceptions, as a failed write hands them over, to the portable words of
gateway/contract/metrics.json (write_errors{error})."""

import json
from pathlib import Path

import pytest
from cassandra import (AuthenticationFailed, ConsistencyLevel, InvalidRequest, OperationTimedOut, Unauthorized,
                       Unavailable, WriteTimeout, WriteType)
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException
from cassandra.protocol import BadCredentials, IsBootstrappingErrorMessage, OverloadedErrorMessage

from telemetry_gateway.write_error_kinds import ERROR_KINDS, error_kind

CONTRACT = Path(__file__).resolve().parents[2] / "contract" / "metrics.json"
HOST = "127.0.0.1:9042"
overloaded = OverloadedErrorMessage(0x1001, "Server is in overloaded state. Cannot accept more requests", None)
bad_credentials = BadCredentials(0x0100, "Provided username gateway and/or password are incorrect", None)


@pytest.mark.parametrize("error, kind", [
    (WriteTimeout("Coordinator node timed out waiting for replica nodes' responses",
                  write_type=WriteType.UNLOGGED_BATCH, consistency=ConsistencyLevel.LOCAL_QUORUM,
                  required_responses=2, received_responses=1), "timeout"),
    (OperationTimedOut(errors={HOST: "Client request timeout"}, last_host=HOST), "timeout"),
    (Unavailable("Cannot achieve consistency level LOCAL_QUORUM", consistency=ConsistencyLevel.LOCAL_QUORUM,
                 required_replicas=2, alive_replicas=1), "unavailable"),
    (NoHostAvailable("Unable to connect to any servers",
                     {HOST: ConnectionRefusedError(111, "Tried connecting to [('127.0.0.1', 1)]. Last error: "
                                                        "Connection refused")}), "unavailable"),
    (NoHostAvailable("Unable to complete the operation against any hosts", {}), "unavailable"),
    (ConnectionException("Pool for 127.0.0.1:9042 is shutdown", endpoint=HOST), "unavailable"),
    (IsBootstrappingErrorMessage(0x1002, "Cannot read from a bootstrapping node", None), "unavailable"),
    (overloaded, "overloaded"),
    (Unauthorized("User gateway has no MODIFY permission on <table telemetry.readings>"), "unauthorized"),
    (AuthenticationFailed("Failed to authenticate to 127.0.0.1:9042"), "unauthorized"),
    (bad_credentials, "unauthorized"),
    (InvalidRequest("Batch too large"), "invalid"),
    (ValueError("could not convert"), "other"),
])
def test_each_driver_error_has_its_kind(error, kind):
    assert error_kind(error) == kind


@pytest.mark.parametrize("causes, kind", [
    ({HOST: overloaded, "127.0.0.2:9042": overloaded}, "overloaded"),  # the default retry policy tried each host
    ({HOST: bad_credentials}, "unauthorized"),  # how a refused login surfaces when the session connects
    ({HOST: overloaded, "127.0.0.2:9042": ConnectionException("closed")}, "unavailable"),  # hosts disagree
    ({HOST: ValueError("odd")}, "unavailable"),
])
def test_no_host_available_takes_the_kind_its_hosts_agree_on(causes, kind):
    assert error_kind(NoHostAvailable("Unable to complete the operation against any hosts", causes)) == kind


def test_the_kinds_are_the_contracts_label_values():
    families = {family["name"]: family for family in json.loads(CONTRACT.read_text())["metrics"]}
    assert tuple(families["telemetry_gateway_write_errors_total"]["labels"]["error"]) == ERROR_KINDS


def test_no_host_available_with_a_list_of_hosts_is_unavailable():
    """The driver's connect with a keyspace raises NoHostAvailable with a list, not a dict of errors: a kind, not
    a crash of the sender."""
    assert error_kind(NoHostAvailable("Unable to connect to any servers using keyspace 'x'", ["127.0.0.1"])) \
        == "unavailable"
