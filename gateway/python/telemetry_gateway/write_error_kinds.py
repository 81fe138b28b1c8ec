"""Failed Cassandra requests by kind (gateway/contract/cassandra-writes.md, "Error kinds"): the server's error code
or the failure's condition decides the kind, a portable word for the write_errors metric.

kind_of() is the contract's table; condition_of() reads the code or condition off what the driver raises."""

from __future__ import annotations

import errno
from dataclasses import dataclass

from cassandra import (AlreadyExists, AuthenticationFailed, FunctionFailure, InvalidRequest, OperationTimedOut,
                       ReadFailure, ReadTimeout, Unauthorized, Unavailable, WriteFailure, WriteTimeout)
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException
from cassandra.protocol import ErrorMessage

ERROR_KINDS = ("timeout", "unavailable", "overloaded", "unauthorized", "invalid", "other")

# The server's error codes (CQL native protocol, "Error codes") that are not "other".
SERVER_ERROR_KINDS = {
    0x1100: "timeout",  # Write_timeout
    0x1200: "timeout",  # Read_timeout
    0x1000: "unavailable",  # Unavailable
    0x1002: "unavailable",  # Is_bootstrapping
    0x1001: "overloaded",  # Overloaded
    0x0100: "unauthorized",  # Bad credentials
    0x2100: "unauthorized",  # Unauthorized
    0x2000: "invalid",  # Syntax_error
    0x2200: "invalid",  # Invalid
    0x2300: "invalid",  # Config_error
    0x2400: "invalid",  # Already_exists
}
CONDITION_KINDS = {
    "request_timeout": "timeout",
    "connect_timeout": "timeout",
    "connection_refused": "unavailable",
    "connection_closed": "unavailable",
    "host_unreachable": "unavailable",
    "authentication_refused": "unauthorized",
}


@dataclass(frozen=True)
class NoHostReachable:
    """Every host tried failed; hosts: each one's condition (none when the driver did not say)."""
    hosts: tuple = ()


Condition = int | str | NoHostReachable  # a server error code, a named condition, or no host reachable


def kind_of(condition: Condition) -> str:
    """One of ERROR_KINDS. No host reachable takes the kind its hosts agree on, unless that is "other"; else it
    is "unavailable"."""
    if isinstance(condition, NoHostReachable):
        kinds = {kind_of(host) for host in condition.hosts}
        return kinds.pop() if len(kinds) == 1 and "other" not in kinds else "unavailable"
    if isinstance(condition, int):
        return SERVER_ERROR_KINDS.get(condition, "other")
    return CONDITION_KINDS.get(condition, "other")


# Server errors the driver converts to exceptions of its own, which no longer carry the code; the others it raises
# as the protocol's error message itself, code included.
_CONVERTED_CODES = ((WriteTimeout, 0x1100), (ReadTimeout, 0x1200), (Unavailable, 0x1000), (ReadFailure, 0x1300),
                    (FunctionFailure, 0x1400), (WriteFailure, 0x1500), (Unauthorized, 0x2100),
                    (AlreadyExists, 0x2400), (InvalidRequest, 0x2200))
_ERRNO_CONDITIONS = {
    errno.ETIMEDOUT: "connect_timeout",
    errno.ECONNREFUSED: "connection_refused",
    errno.ECONNRESET: "connection_closed",
    errno.ECONNABORTED: "connection_closed",
    errno.EPIPE: "connection_closed",
    errno.ESHUTDOWN: "connection_closed",
    errno.EHOSTUNREACH: "host_unreachable",
    errno.ENETUNREACH: "host_unreachable",
}


def condition_of(error: BaseException) -> Condition:
    if isinstance(error, NoHostAvailable):
        # errors maps each host to its error; the driver's keyspace check at connect gives a plain list instead.
        hosts = error.errors.values() if isinstance(error.errors, dict) else ()
        return NoHostReachable(tuple(condition_of(host) for host in hosts))
    if isinstance(error, ErrorMessage):
        return error.code
    for cls, code in _CONVERTED_CODES:
        if isinstance(error, cls):
            return code
    if isinstance(error, OperationTimedOut):
        return "request_timeout"
    if isinstance(error, AuthenticationFailed):
        return "authentication_refused"
    if isinstance(error, ConnectionException):  # a connection the driver found closed or defunct
        return "connection_closed"
    if isinstance(error, TimeoutError):
        return "connect_timeout"
    if isinstance(error, OSError):
        return _ERRNO_CONDITIONS.get(error.errno, "other")
    return "other"


def condition_name(condition: Condition) -> str:
    """The condition as a log line names it (cassandra-writes.md, Error kinds): 0x1100, connection_refused,
    no_host_reachable."""
    if isinstance(condition, NoHostReachable):
        return "no_host_reachable"
    if isinstance(condition, int):
        return f"0x{condition:04X}"
    return condition


def first_line(error: BaseException, limit: int = 200) -> str:
    """The error's message for a log's detail field: its first line, at most limit characters."""
    text = str(error).strip()
    return text.splitlines()[0][:limit] if text else ""


def error_kind(error: BaseException) -> str:
    """The kind of what the driver raised."""
    return kind_of(condition_of(error))
