"""A TCP proxy in front of Cassandra's native port, so that a scenario can take Cassandra away from the gateways
without touching the node the other suites share: cut() makes it unreachable (connections closed, new ones refused),
hang() makes it hung (connections stay open and accepted, nothing is answered: no error, only the driver's
timeouts), restore() forwards again, what was held back included. Gateways reach it with
TELEMETRY_CASSANDRA_PORT=proxy.port."""

from __future__ import annotations

import socket
import threading


class CutProxy:
    def __init__(self, host: str, port: int = 9042) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.sockets: set[socket.socket] = set()
        self.open = True
        self.flowing = threading.Event()  # cleared while hung
        self.flowing.set()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if not self.open:
                    client.close()
                    continue
                try:
                    upstream = socket.create_connection(self.target, timeout=5)
                except OSError:
                    client.close()
                    continue
                upstream.settimeout(None)
                self.sockets |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                while not self.flowing.wait(0.1):  # hung: hold the bytes, answer nothing
                    if self.closed or source not in self.sockets:
                        raise OSError("closed while hung")
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            self._close(s)

    def _close(self, s: socket.socket) -> None:
        with self.lock:
            self.sockets.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def cut(self) -> None:
        """Unreachable: every connection closed, new ones closed at once."""
        with self.lock:
            self.open = False
            open_sockets = list(self.sockets)
        self.flowing.set()
        for s in open_sockets:
            self._close(s)

    def hang(self) -> None:
        """Hung: connections stay up, nothing goes through either way."""
        self.flowing.clear()

    def restore(self) -> None:
        with self.lock:
            self.open = True
        self.flowing.set()

    def close(self) -> None:
        self.closed = True
        self.cut()
        self.listener.close()
