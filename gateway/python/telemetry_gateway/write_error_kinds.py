"""Failed Cassandra requests by kind: portable words for the write_errors metric (gateway/contract/metrics.json),
the same in every gateway, instead of one language's exception names."""

from __future__ import annotations

from cassandra import (AuthenticationFailed, InvalidRequest, OperationTimedOut, ReadTimeout, Unauthorized,
                       Unavailable, WriteTimeout)
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException
from cassandra.protocol import BadCredentials, IsBootstrappingErrorMessage, OverloadedErrorMessage

ERROR_KINDS = ("timeout", "unavailable", "overloaded", "unauthorized", "invalid", "other")

# The driver hands some server errors over as its protocol messages (OverloadedErrorMessage, BadCredentials,
# IsBootstrappingErrorMessage), others converted (WriteTimeout, Unauthorized, InvalidRequest).
_KINDS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    ((WriteTimeout, ReadTimeout, OperationTimedOut, TimeoutError), "timeout"),
    ((Unavailable, IsBootstrappingErrorMessage, ConnectionException, ConnectionError), "unavailable"),
    (OverloadedErrorMessage, "overloaded"),
    ((Unauthorized, AuthenticationFailed, BadCredentials), "unauthorized"),
    (InvalidRequest, "invalid"),
)


def error_kind(error: BaseException) -> str:
    """One of ERROR_KINDS. NoHostAvailable is what the driver raises once every host failed: its hosts' errors
    tell why (every host overloaded, the credentials refused); when they do not agree, it is "unavailable"."""
    if isinstance(error, NoHostAvailable):
        # errors maps each host to its error; the driver's keyspace check at connect gives a plain list instead.
        causes = error.errors.values() if isinstance(error.errors, dict) else ()
        kinds = {error_kind(cause) for cause in causes}
        return kinds.pop() if len(kinds) == 1 and "other" not in kinds else "unavailable"
    for classes, kind in _KINDS:
        if isinstance(error, classes):
            return kind
    return "other"
