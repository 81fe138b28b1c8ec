"""Failed Cassandra requests by kind: portable words for the write_errors metric (gateway/contract/metrics.json),
the same in every gateway, instead of one language's exception names."""

from __future__ import annotations

from cassandra import (AuthenticationFailed, InvalidRequest, OperationTimedOut, ReadTimeout, Unauthorized,
                       Unavailable, WriteTimeout)
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException
from cassandra.protocol import OverloadedErrorMessage

ERROR_KINDS = ("timeout", "unavailable", "overloaded", "unauthorized", "invalid", "other")

_KINDS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    ((WriteTimeout, ReadTimeout, OperationTimedOut, TimeoutError), "timeout"),
    ((Unavailable, NoHostAvailable, ConnectionException, ConnectionError), "unavailable"),
    (OverloadedErrorMessage, "overloaded"),
    ((Unauthorized, AuthenticationFailed), "unauthorized"),
    (InvalidRequest, "invalid"),
)


def error_kind(error: BaseException) -> str:
    """One of ERROR_KINDS."""
    for classes, kind in _KINDS:
        if isinstance(error, classes):
            return kind
    return "other"
