"""A TCP proxy in front of Cassandra's native port that makes it slow for the gateways behind it, and for nobody
else: every answer reaches the gateway delay_s after Cassandra sent it. Requests pass at once and answers keep
their order and pace, so throughput is Cassandra's and only the latency grows (a slow link or an overloaded node).
Gateways reach it with TELEMETRY_CASSANDRA_PORT=proxy.port; delay_s may be changed while it runs."""

from __future__ import annotations

import queue
import socket
import threading
import time


class SlowProxy:
    def __init__(self, host: str, delay_s: float, port: int = 9042) -> None:
        self.target = (host, port)
        self.delay_s = delay_s
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closed = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                continue
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            answers: queue.Queue = queue.Queue()
            threading.Thread(target=self._pipe, args=(client, upstream, None), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, answers), daemon=True).start()
            threading.Thread(target=self._deliver, args=(answers, client), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, delayed: queue.Queue | None) -> None:
        try:
            while data := source.recv(65536):
                if delayed is None:
                    sink.sendall(data)
                else:
                    delayed.put((time.monotonic() + self.delay_s, data))
        except OSError:
            pass
        if delayed is not None:
            delayed.put(None)
        else:
            self._close(sink)

    def _deliver(self, answers: queue.Queue, client: socket.socket) -> None:
        try:
            while (item := answers.get()) is not None:
                due, data = item
                time.sleep(max(0.0, due - time.monotonic()))
                client.sendall(data)
        except OSError:
            pass
        self._close(client)

    @staticmethod
    def _close(s: socket.socket) -> None:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for s in self._sockets:
            self._close(s)
