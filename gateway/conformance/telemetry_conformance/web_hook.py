"""A local web hook for the alert scenarios: a real HTTP server on 127.0.0.1 that records every POST (path, headers,
body) and answers 200, or as a test scripts it, so a test sees exactly what an [[alerts]] command such as
deploy/notify's telemetry-alert-webhook delivered and how it takes each answer. `web_hook` is its fixture."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass(frozen=True)
class Posted:
    path: str
    headers: Message
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


class Hook(ThreadingHTTPServer):
    """Serves on a free port from construction until close(); `url` is its base followed by `path`. Each POST takes
    the next of `answers`, (status, headers), and 200 once they run out; status None holds the answer until close()
    (a server that never replies)."""

    def __init__(self, path: str = ""):
        self.requests: list[Posted] = []
        self.answers: list[tuple[int | None, dict[str, str]]] = []
        self.release = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                hook.requests.append(Posted(self.path, self.headers, body))
                status, headers = hook.answers.pop(0) if hook.answers else (200, {})
                if status is None:
                    hook.release.wait(30)
                    return
                self.send_response(status)
                for name, value in {"Content-Length": "0", **headers}.items():
                    self.send_header(name, value)
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server_address[1]}{path}"
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    def posted(self, path: str) -> list[Posted]:
        """The POSTs to path, in the order they came."""
        return [request for request in list(self.requests) if request.path == path]

    def close(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()


@pytest.fixture
def web_hook() -> Iterator[Hook]:
    server = Hook()
    yield server
    server.close()
