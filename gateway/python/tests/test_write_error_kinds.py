"""condition_of reads the server's error code or the failure's condition off the driver's real exceptions, as a
failed write hands them over; kind_of's table is the contract's (vectors/error_kinds.jsonl, run by
test_contract_vectors.py)."""

import errno
import json
from pathlib import Path

import pytest
from cassandra import (AlreadyExists, AuthenticationFailed, ConsistencyLevel, InvalidRequest, OperationTimedOut,
                       Unauthorized, Unavailable, WriteFailure, WriteTimeout, WriteType)
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException, ConnectionShutdown
from cassandra.protocol import (BadCredentials, ErrorMessage, IsBootstrappingErrorMessage, OverloadedErrorMessage,
                                SyntaxException)

from telemetry_gateway.write_error_kinds import ERROR_KINDS, NoHostReachable, condition_of, error_kind

CONTRACT = Path(__file__).resolve().parents[2] / "contract" / "metrics.json"
HOST = "127.0.0.1:9042"
overloaded = OverloadedErrorMessage(0x1001, "Server is in overloaded state. Cannot accept more requests", None)
bad_credentials = BadCredentials(0x0100, "Provided username gateway and/or password are incorrect", None)


@pytest.mark.parametrize("error, condition", [
    (WriteTimeout("Coordinator node timed out waiting for replica nodes' responses",
                  write_type=WriteType.UNLOGGED_BATCH, consistency=ConsistencyLevel.LOCAL_QUORUM,
                  required_responses=2, received_responses=1), 0x1100),
    (Unavailable("Cannot achieve consistency level LOCAL_QUORUM", consistency=ConsistencyLevel.LOCAL_QUORUM,
                 required_replicas=2, alive_replicas=1), 0x1000),
    (WriteFailure("Operation failed", consistency=ConsistencyLevel.ONE, required_responses=1,
                  received_responses=0, failures=1), 0x1500),
    (Unauthorized("User gateway has no MODIFY permission on <table telemetry.readings>"), 0x2100),
    (InvalidRequest("Batch too large"), 0x2200),
    (AlreadyExists(keyspace="telemetry", table="readings"), 0x2400),
    (IsBootstrappingErrorMessage(0x1002, "Cannot read from a bootstrapping node", None), 0x1002),
    (overloaded, 0x1001),
    (bad_credentials, 0x0100),
    (SyntaxException(0x2000, "line 1:0 no viable alternative at input 'INSER'", None), 0x2000),
    (ErrorMessage(0x7777, "a code the driver does not know", None), 0x7777),
    (OperationTimedOut(errors={HOST: "Client request timeout"}, last_host=HOST), "request_timeout"),
    (AuthenticationFailed("Failed to authenticate to 127.0.0.1:9042"), "authentication_refused"),
    (ConnectionException("Pool for 127.0.0.1:9042 is shutdown", endpoint=HOST), "connection_closed"),
    (ConnectionShutdown("Connection to 127.0.0.1:9042 was closed"), "connection_closed"),
    (TimeoutError("timed out"), "connect_timeout"),
    (ConnectionRefusedError(errno.ECONNREFUSED, "Tried connecting to [('127.0.0.1', 1)]. Last error: "
                                                "Connection refused"), "connection_refused"),
    (ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"), "connection_closed"),
    (BrokenPipeError(errno.EPIPE, "Broken pipe"), "connection_closed"),
    (OSError(errno.EHOSTUNREACH, "No route to host"), "host_unreachable"),
    (OSError(errno.ENETUNREACH, "Network is unreachable"), "host_unreachable"),
    (OSError(errno.EACCES, "Permission denied"), "other"),
    (ValueError("could not convert"), "other"),
    (NoHostAvailable("Unable to complete the operation against any hosts", {}), NoHostReachable(())),
    (NoHostAvailable("Unable to complete the operation against any hosts",
                     {HOST: overloaded, "127.0.0.2:9042": ConnectionException("closed")}),
     NoHostReachable((0x1001, "connection_closed"))),
    # The driver's keyspace check at connect gives a plain list of hosts, not their errors.
    (NoHostAvailable("Unable to connect to any servers using keyspace 'x'", ["127.0.0.1"]), NoHostReachable(())),
])
def test_each_driver_error_has_its_condition(error, condition):
    assert condition_of(error) == condition


def test_a_write_timeout_is_a_timeout_hosts_that_disagree_unavailable():
    assert error_kind(WriteTimeout("timed out", write_type=WriteType.UNLOGGED_BATCH)) == "timeout"
    assert error_kind(NoHostAvailable("Unable to complete the operation against any hosts",
                                      {HOST: overloaded, "127.0.0.2:9042": ValueError("odd")})) == "unavailable"


def test_the_kinds_are_the_contracts_label_values():
    families = {family["name"]: family for family in json.loads(CONTRACT.read_text())["metrics"]}
    assert tuple(families["telemetry_gateway_write_errors_total"]["labels"]["error"]) == ERROR_KINDS
