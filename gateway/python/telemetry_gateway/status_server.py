"""The [metrics] listen endpoint: /metrics (Prometheus), / (the contract's status.html) and /status.json, with the
limits and rules of gateway/contract/status.md, "The listener". The head of each request is framed here (size and
time limits), checked by h11 against RFC 9112's grammar and decided by http_rules; no body is ever read."""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time

import h11
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from .contract_constants import contract_number, contract_seconds
from .http_rules import CLOSING, Request, decide, listener, page_csp
from .logs import ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog
from .status_page import PAGE, StatusPage

MAX_HEAD = contract_number("http_head_bytes_max")
HEAD_TIMEOUT_S = contract_seconds("http_head_timeout_ms")
MAX_CONNECTIONS = contract_number("http_connections_max")
# An answer the client does not take within this closes the connection.
UNREAD_TIMEOUT_S = contract_seconds("http_unread_timeout_ms")
SEND_BUFFER = 256 * 1024  # answers a client may leave unread in the kernel, so the timeout above starts soon
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
           413: "Content Too Large", 421: "Misdirected Request", 431: "Request Header Fields Too Large",
           500: "Internal Server Error", 503: "Service Unavailable"}
TEXTS = {404: "not found; try /, /status.json, /metrics or /healthz", 405: "only GET and HEAD",
         421: "this Host name is not served here (status.md: [metrics] host_names)",
         431: f"the request head is over {MAX_HEAD} bytes", 413: "no request body is read here",
         408: "the request head took over 5 s", 400: "bad request"}
PAGE_CSP = page_csp(PAGE)
LOG = RateLimitedLog(LONG_INTERVAL_S)
# What h11 lets through but RFC 9112 lets a server refuse (status.md, rule 1): bare LF line ends, a CR or another
# control character that ends no line, folded lines, and a Content-Length given more than once.
_BAD_BYTE = re.compile(rb"(?<!\r)\n|\r(?!\n|$)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Bytes that cannot start a request line (a method is a token): refused before the head ends, e.g. a TLS hello.
_NOT_A_START = re.compile(rb"(?![!#$%&'*+.^_`|~0-9A-Za-z-]*(?: |$))")
_FOLDED = re.compile(rb"\r\n[ \t]")
_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:", re.IGNORECASE)


class Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Closed(Exception):
    """The peer hung up, or sent nothing in time: close without an answer."""


def answer(status: int, headers: list[tuple[str, str]] = (), body: bytes | None = None, head_only: bool = False,
           close: bool = False) -> bytes:
    if body is None:
        body = f"{TEXTS.get(status, REASONS[status])}\n".encode()
        headers = [("Content-Type", "text/plain; charset=utf-8"), *headers]
    lines = [f"HTTP/1.1 {status} {REASONS[status]}", *(f"{name}: {value}" for name, value in headers),
             "X-Content-Type-Options: nosniff", f"Content-Length: {len(body)}"]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


def parse_head(head: bytes) -> tuple[Request, bool, str]:
    """A head (ending in CRLF CRLF) as a Request, whether the connection closes after it (asked, or HTTP/1.0) and
    its Accept field; Refused(400) when it breaks the grammar."""
    if _BAD_BYTE.search(head) or _FOLDED.search(head) or len(_LENGTH.findall(head)) > 1:
        raise Refused(400)
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(head)
    try:
        request = connection.next_event()
    except h11.RemoteProtocolError:
        raise Refused(400) from None
    if not isinstance(request, h11.Request):
        raise Refused(400)
    fields = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers]
    first = {}
    for name, value in fields:
        first.setdefault(name, value)
    parsed = Request(request.method.decode("latin-1"), request.target.decode("latin-1"),
                     request.http_version.decode("latin-1"), tuple(v for n, v in fields if n == "host"),
                     first.get("content-length"), first.get("transfer-encoding"))
    tokens = {token.strip().lower() for n, v in fields if n == "connection" for token in v.split(",")}
    # a CONNECT or an upgrade never changes protocol here; the connection closes after its answer
    close = "close" in tokens or parsed.version != "1.1" or parsed.method == "CONNECT" or "upgrade" in first
    return parsed, close, first.get("accept", "")


class StatusServer:
    """Serves on HOST:PORT (an empty HOST: every IPv4 interface) from a daemon thread, one thread per connection,
    at most MAX_CONNECTIONS; shutdown() stops accepting."""

    def __init__(self, listen: str, registry: CollectorRegistry, page: StatusPage, host_names=()) -> None:
        host, _, port = listen.rpartition(":")
        family, _, _, _, address = socket.getaddrinfo(host.strip("[]") or "0.0.0.0", int(port),
                                                      type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind(address)
            self.socket.listen(128)
        except OSError:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()
        self.registry, self.page, self.where = registry, page, listener(listen, host_names)
        self.refused = page.metrics.http_refused
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, name="status server", daemon=True)
        self.thread.start()

    def shutdown(self) -> None:
        self.stopping.set()
        try:
            self.socket.shutdown(socket.SHUT_RDWR)  # wakes accept()
        except OSError:
            pass
        self.thread.join(5)

    def server_close(self) -> None:
        self.socket.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                if self.stopping.is_set():
                    return
                time.sleep(0.05)  # e.g. out of file descriptors: try again, never spin
                continue
            if not self.slots.acquire(blocking=False):
                connection.close()  # over the bound: closed at once, without an answer
                self.refused.labels("dropped").inc()
                continue
            try:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
                threading.Thread(target=self._serve, args=(connection,), name="status connection", daemon=True).start()
            except (OSError, RuntimeError):  # reset already, or no thread to be had: this one is closed unanswered
                connection.close()
                self.slots.release()
                self.refused.labels("dropped").inc()

    def _serve(self, connection: socket.socket) -> None:
        try:
            with connection:
                self._requests(connection)
        except TimeoutError:  # a recv's is handled in _head: this is an answer the client did not take in time
            self.refused.labels("unread").inc()
        except (Closed, OSError):
            pass
        except Exception as error:  # a bug: this connection ends, the listener and the gateway run on
            LOG.event(logging.WARNING, "status_request_failed", error=repr(error)[:ERROR_CHARS])
        finally:
            self.slots.release()

    def _requests(self, connection: socket.socket) -> None:
        pending, first = b"", True
        while True:
            deadline = time.monotonic() + HEAD_TIMEOUT_S
            try:
                head, pending = self._head(connection, pending, deadline, first)
                request, close, accept = parse_head(head)
            except Refused as refused:
                self.refused.labels(str(refused.status)).inc()
                connection.settimeout(UNREAD_TIMEOUT_S)
                connection.sendall(answer(refused.status, close=True))
                return
            status, path = decide(request, self.where)
            close = close or status in CLOSING
            reply = self._respond(status, path, request.method == "HEAD", accept, close)
            if not reply.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 503 ") if path == "/healthz" else b"HTTP/1.1 200 "):
                self.refused.labels(reply[9:12].decode()).inc()
            connection.settimeout(UNREAD_TIMEOUT_S)
            connection.sendall(reply)
            if close:
                return
            first = False

    @staticmethod
    def _head(connection: socket.socket, pending: bytes, deadline: float, first: bool) -> tuple[bytes, bytes]:
        """The next head (through its CRLF CRLF) and the bytes after it, due by deadline (the first head) or within
        HEAD_TIMEOUT_S of its first byte (a later one). Out of time: 408, or, on a connection idle after an answer,
        closed without one."""
        started = first or bool(pending)
        while True:
            end = pending.find(b"\r\n\r\n")
            if end >= 0 and end + 4 <= MAX_HEAD:
                return pending[:end + 4], pending[end + 4:]
            if end >= 0 or len(pending) > MAX_HEAD:
                raise Refused(431)
            if _BAD_BYTE.search(pending) or _NOT_A_START.match(pending[:64]):
                raise Refused(400)
            left = deadline - time.monotonic()
            if left <= 0:
                if started:
                    raise Refused(408)
                raise Closed()
            connection.settimeout(left)
            try:
                data = connection.recv(4096)
            except TimeoutError:
                continue
            if not data:
                raise Closed()
            if not started:
                started, deadline = True, time.monotonic() + HEAD_TIMEOUT_S
            pending += data

    def _respond(self, status: int, path: str | None, head_only: bool, accept: str, close: bool) -> bytes:
        if status == 405:
            return answer(405, [("Allow", "GET, HEAD")], head_only=head_only, close=close)
        if status != 200:
            return answer(status, head_only=head_only, close=close)
        try:
            if path == "/metrics":
                encoder, kind = choose_encoder(accept)
                return answer(200, [("Content-Type", kind)], encoder(self.registry), head_only, close)
            if path == "/":
                return answer(200, [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                                    ("Content-Security-Policy", PAGE_CSP)], PAGE, head_only, close)
            if path == "/healthz":
                health, reason = self.page.health()
                return answer(health, [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                              f"{reason}\n".encode(), head_only, close)
            body = json.dumps(self.page.document(), ensure_ascii=False).encode()
            return answer(200, [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body,
                          head_only, close)
        except Exception as error:  # a bug: the client sees it, the gateway keeps running
            return answer(500, [("Content-Type", "text/plain; charset=utf-8")], f"{path} failed: {error}\n".encode(),
                          head_only, close)


def start_status_server(listen: str, registry: CollectorRegistry, page: StatusPage, host_names=()) -> StatusServer:
    return StatusServer(listen, registry, page, host_names)
