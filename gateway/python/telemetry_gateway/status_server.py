"""The [metrics] listen endpoint: /metrics (Prometheus), / (the contract's status.html) and /status.json; any
other path 404, any other method 405 (gateway/contract/status.md, "Serving")."""

from __future__ import annotations

import json
import socket
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from .status_page import PAGE, StatusPage


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args) -> None:  # one line per request would flood the journal
        pass


def status_app(registry: CollectorRegistry, page: StatusPage):
    metrics_app = make_wsgi_app(registry)

    def app(environ, start_response):
        path, method = environ.get("PATH_INFO", "/"), environ["REQUEST_METHOD"]
        if path not in ("/", "/status.json", "/metrics"):
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"not found; try /, /status.json or /metrics\n"]
        if method not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
            return [b""]
        if path == "/metrics":
            return metrics_app(environ, start_response)
        if path == "/":
            body, kind = PAGE, "text/html; charset=utf-8"
        else:
            try:
                body, kind = json.dumps(page.document(), ensure_ascii=False).encode(), "application/json"
            except Exception as error:  # a bug: the page shows the answer, the gateway keeps running
                start_response("500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8")])
                return [f"status failed: {error}\n".encode()]
        start_response("200 OK", [("Content-Type", kind), ("Cache-Control", "no-store"),
                                  ("Content-Length", str(len(body)))])
        return [b"" if method == "HEAD" else body]

    return app


def start_status_server(listen: str, registry: CollectorRegistry, page: StatusPage) -> ThreadingWSGIServer:
    """Serves on HOST:PORT (an empty HOST: every IPv4 interface) from a daemon thread; shutdown() stops it."""
    host, _, port = listen.rpartition(":")
    family, _, _, _, address = socket.getaddrinfo(host or "0.0.0.0", int(port), type=socket.SOCK_STREAM,
                                                  flags=socket.AI_PASSIVE)[0]

    class Server(ThreadingWSGIServer):
        address_family = family

    server = make_server(address[0], int(port), status_app(registry, page), Server, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="status server", daemon=True).start()
    return server
