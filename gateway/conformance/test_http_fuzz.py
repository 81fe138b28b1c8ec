"""Gateway conformance (gateway/contract/status.md, "The listener"): no request stops or stalls the status listener.
Every gateway under test, side by side, gets over raw loopback sockets: a corpus of malformed, oversized, pipelined,
body-carrying and wrong-Host requests, each answered with the status the rules give (and nosniff); random bytes and
mutated requests, each answered with a status of the rules or closed, never a 500, never left hanging; slowloris
(connections sending a byte a second), closed by the head timeout while /metrics stays prompt; pipelined requests
whose answers are never read, closed; more connections than the bound, the extra ones closed at once. Meanwhile a board writes timed frames; afterwards the gateway still
serves /metrics, /status.json, /healthz and the page (with its hash CSP), never exited, and every frame is in Cassandra
exactly once. HTTP_FUZZ_SEED=n replays the random part."""

from __future__ import annotations

import base64
import hashlib
import os
import random
import re
import socket
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import pytest

from telemetry_conformance import ROOT, Stream, TimedWriter, assert_each_frame_once, stored_frames, wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace, side_by_side  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in the one test, side by side

LISTED = "greenhouse-pi.local"  # [metrics] host_names, from the environment
H = b"Host: 127.0.0.1\r\n"
C = b"Connection: close\r\n"
HEAD_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 64
SLOW = 40  # slowloris connections per gateway: with the corpus's and the random bytes' below the bound
CROWD = 90  # idle connections per gateway, over the bound
RANDOM = 150  # random and mutated requests per gateway
UNREAD = 2  # connections per gateway that pipeline requests and read no answer


def get(path: bytes, *fields: bytes, version: bytes = b"1.1", method: bytes = b"GET") -> bytes:
    return method + b" " + path + b" HTTP/" + version + b"\r\n" + b"".join(fields) + b"\r\n"


# (name, bytes sent, the statuses answered in order, whether the gateway closes the connection after them)
CORPUS = [
    ("the metrics", get(b"/metrics", H, C), [200], True),
    ("// (crashed a gateway once)", get(b"//", H), [404], False),
    ("http://[ (crashed a gateway once)", get(b"http://[", H), [404], False),
    ("absolute-form", get(b"http://127.0.0.1/metrics", H), [404], False),
    ("a dot segment", get(b"/./metrics", H), [404], False),
    ("percent-encoded", get(b"/%6Detrics", H), [404], False),
    ("a trailing slash", get(b"/status.json/", H), [404], False),
    ("a query is ignored", get(b"/status.json?t=1", H, C), [200], True),
    ("HTTP/0.9", b"GET /\r\n\r\n", [400], True),
    ("HTTP/2.0 in a request line", get(b"/", H, version=b"2.0"), [400], True),
    ("the HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", [400], True),
    ("HTTP/1.2", get(b"/", H, version=b"1.2"), [400], True),
    ("HTTP/1.1 without Host", get(b"/"), [400], True),
    ("two Hosts", get(b"/", H, H), [400], True),
    ("an empty Host", get(b"/", b"Host:\r\n"), [400], True),
    ("a Host with userinfo", get(b"/", b"Host: u@127.0.0.1\r\n"), [400], True),
    ("an unknown method", get(b"/", H, method=b"FOO"), [400], True),
    ("a lower-case method", get(b"/", H, method=b"get"), [400], True),
    ("WebDAV", get(b"/", H, method=b"PROPFIND"), [400], True),
    ("POST", get(b"/metrics", H, method=b"POST"), [405], False),
    ("DELETE on any path", get(b"/nope", H, method=b"DELETE"), [405], False),
    ("OPTIONS *", get(b"*", H, method=b"OPTIONS"), [405], False),
    ("CONNECT", get(b"127.0.0.1:22", H, method=b"CONNECT"), [405], True),
    ("a body", get(b"/", H, b"Content-Length: 5\r\n", method=b"POST") + b"hello", [413], True),
    ("a chunked body", get(b"/", H, b"Transfer-Encoding: chunked\r\n") + b"0\r\n\r\n", [413], True),
    ("Content-Length and Transfer-Encoding", get(b"/", H, b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n")
     + b"abc", [400], True),
    ("Content-Length twice", get(b"/", H, b"Content-Length: 0\r\nContent-Length: 0\r\n"), [400], True),
    ("Content-Length not a number", get(b"/", H, b"Content-Length: -1\r\n"), [400], True),
    ("a WebSocket upgrade", get(b"/status.json", H, b"Upgrade: websocket\r\nConnection: Upgrade\r\n"), [200], True),
    ("an h2c upgrade", get(b"/metrics", H, b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                                            b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"), [200], True),
    ("a folded field", get(b"/", H, b"X: a\r\n b\r\n"), [400], True),
    ("bare LF line ends", b"GET / HTTP/1.1\nHost: 127.0.0.1\n\n", [400], True),
    ("a stray CR", get(b"/", H, b"X: a\rb\r\n"), [400], True),
    ("a field without a colon", get(b"/", H, b"nocolon\r\n"), [400], True),
    ("a space before the colon", get(b"/", H, b"X : y\r\n"), [400], True),
    ("NUL in the target", get(b"/\x00", H), [400], True),
    ("a control character in a value", get(b"/", H, b"X: \x01\r\n"), [400], True),
    ("an 8-bit target", get(b"/\xff", H), [400], True),
    ("a space in the target", get(b"/a b", H), [400], True),
    ("a TLS hello", bytes.fromhex("160301020001000100fc0303") + bytes(32), [400], True),
    ("DNS rebinding", get(b"/status.json", b"Host: attacker.example:9108\r\n"), [421], True),
    ("a name that resolves to loopback", get(b"/status.json", b"Host: localtest.me\r\n"), [421], True),
    ("127.1 is not an IP literal", get(b"/", b"Host: 127.1\r\n"), [421], True),
    ("a LAN address on a loopback listener", get(b"/", b"Host: 192.168.1.5\r\n"), [421], True),
    ("a foreign Host before the method", get(b"/", b"Host: evil.example\r\n", method=b"POST"), [421], True),
    ("a listed name", get(b"/status.json", f"Host: {LISTED.upper()}:80\r\n".encode(), C), [200], True),
    ("localhost", get(b"/", b"Host: localhost\r\n", C), [200], True),
    ("[::1]", get(b"/metrics", b"Host: [::1]:9108\r\n", C), [200], True),
    ("HTTP/1.0 without Host", get(b"/metrics", version=b"1.0"), [200], True),
    ("HTTP/1.0 with a foreign Host", get(b"/", b"Host: evil.example\r\n", version=b"1.0"), [421], True),
    ("a head of 9000 bytes", get(b"/", H, b"X: " + b"a" * 9000 + b"\r\n"), [431], True),
    ("a target of 9000 bytes", get(b"/" + b"a" * 9000, H), [431], True),
    ("2000 fields", get(b"/", H, *(b"X%d: y\r\n" % i for i in range(2000))), [431], True),
    ("a head of 7000 bytes is fine", get(b"/metrics", H, b"X: " + b"a" * 7000 + b"\r\n", C), [200], True),
    ("a megabyte without a line end", b"GET /" + b"a" * (1 << 20), [431], True),
    ("a megabyte of body", get(b"/", H, b"Content-Length: 1048576\r\n", method=b"PUT") + b"x" * (1 << 20),
     [413], True),
    ("three pipelined", get(b"/metrics", H) + get(b"/status.json", H) + get(b"/nope", H, C), [200, 200, 404], True),
    ("pipelined, then a bad one", get(b"/", H) + b"BAD\r\n\r\n" + get(b"/", H), [200, 400], True),
    ("HEAD", get(b"/status.json", H, C, method=b"HEAD"), [200], True),
    ("the health check, healthy", get(b"/healthz?probe=1", H, C), [200], True),
    ("POST on the health check", get(b"/healthz", H, method=b"POST"), [405], False),
]
ANSWERS = {200, 400, 404, 405, 408, 413, 421, 431, 503}  # every status the rules give (503: /healthz)
_STATUS = re.compile(rb"HTTP/1\.1 ([0-9]{3}) [^\r\n]*\r\n")


def read_answers(sock: socket.socket, count: int, heads: list[bool], timeout: float) -> tuple[list[dict], bytes]:
    """count answers from sock ({status, fields}), reading bodies by Content-Length (none for a HEAD); and whatever
    follows until the peer closes or timeout passes."""
    sock.settimeout(timeout)
    data, answers = b"", []
    deadline = time.monotonic() + timeout

    def more() -> bool:
        nonlocal data
        try:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            return False
        data += chunk
        return bool(chunk)

    while len(answers) < count:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            if not more():
                break
            continue
        match = _STATUS.match(data)
        assert match, f"not an HTTP/1.1 answer: {data[:200]!r}"
        fields = {}
        for line in data[match.end():end].split(b"\r\n"):
            name, _, value = line.partition(b":")
            fields[name.strip().lower().decode()] = value.strip().decode()
        size = 0 if heads[len(answers)] else int(fields.get("content-length", "0"))
        while len(data) < end + 4 + size and more():
            pass
        answers.append({"status": int(match[1]), "fields": fields})
        data = data[end + 4 + size:]
    return answers, data


def exchange(port: int, payload: bytes, count: int, heads: list[bool], timeout: float = 8.0, wait_close: float = 1.0):
    """Sends payload (the rest may be refused: the gateway closes early), reads count answers, then whether the
    gateway closed the connection within wait_close seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sender = threading.Thread(target=_send, args=(sock, payload), daemon=True)
        sender.start()
        answers, rest = read_answers(sock, count, heads, timeout)
        sock.settimeout(wait_close)
        try:
            closed = rest == b"" and sock.recv(1) == b""
        except TimeoutError:
            closed = False
        except ConnectionResetError:
            closed = True
        sender.join(timeout)
        return answers, closed


def _send(sock: socket.socket, payload: bytes) -> None:
    try:
        sock.sendall(payload)
    except OSError:  # refused before the end: the gateway closed
        pass


def check_corpus(name: str, port: int) -> list[str]:
    failures = []
    for case, payload, statuses, closes in CORPUS:
        heads = [False] * len(statuses)
        if payload.startswith(b"HEAD "):
            heads = [True]
        answers, closed = exchange(port, payload, len(statuses), heads, wait_close=1.0 if closes else 0.1)
        got = [a["status"] for a in answers]
        if got != statuses or (closes and not closed):
            failures.append(f"{name}: {case}: {got}, closed {closed}; want {statuses}, closed {closes}")
        for answer in answers:
            if answer["fields"].get("x-content-type-options") != "nosniff":
                failures.append(f"{name}: {case}: no nosniff: {answer['fields']}")
            if answer["status"] == 405 and answer["fields"].get("allow") != "GET, HEAD":
                failures.append(f"{name}: {case}: 405 without Allow: GET, HEAD")
    return failures


def mutated(rng: random.Random) -> bytes:
    data = bytearray(rng.choice([case[1] for case in CORPUS if len(case[1]) < 2000]))
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data))
        op = rng.randrange(4)
        if op == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            del data[at]
        elif op == 2:
            data.insert(at, rng.randrange(256))
        else:
            del data[at:]
        if not data:
            data = bytearray(b"G")
    return bytes(data)


def check_random(name: str, port: int, seed: int) -> list[str]:
    """Random bytes and mutated requests, sent then half-closed: every answer a status of the rules, no 500, and the
    connection closed within the head timeout and a margin."""
    rng = random.Random(f"{seed}-{name}")
    payloads = [rng.randbytes(rng.randint(1, 3000)) if i % 2 else mutated(rng) for i in range(RANDOM)]

    def one(payload: bytes) -> str | None:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            _send(sock, payload)
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            data, deadline = b"", time.monotonic() + HEAD_TIMEOUT_S + 3
            while time.monotonic() < deadline:
                try:
                    sock.settimeout(max(0.01, deadline - time.monotonic()))
                    chunk = sock.recv(65536)
                except TimeoutError:
                    return f"{name}: left open past {HEAD_TIMEOUT_S + 3} s: {payload[:80]!r}"
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                data += chunk
            else:
                return f"{name}: left open past {HEAD_TIMEOUT_S + 3} s: {payload[:80]!r}"
        if data and not data.startswith(b"HTTP/1.1 "):
            return f"{name}: not an HTTP answer {data[:80]!r} to {payload[:80]!r}"
        statuses = {int(s) for s in re.findall(rb"(?:^|\n)HTTP/1\.1 ([0-9]{3}) ", data)}
        if not statuses <= ANSWERS:
            return f"{name}: {sorted(statuses - ANSWERS)} to {payload[:80]!r}"
        return None

    with ThreadPoolExecutor(8) as pool:
        return [failure for failure in pool.map(one, payloads) if failure]


def prompt_metrics(port: int, within: float = 3.0) -> bool:
    started = time.monotonic()
    answers, _ = exchange(port, get(b"/metrics", H, C), 1, [False], timeout=within)
    return [a["status"] for a in answers] == [200] and time.monotonic() - started <= within


def check_slowloris(name: str, port: int) -> list[str]:
    """SLOW connections each sending its head a byte a second: all closed (408 or silently) within the head timeout
    and a margin, while /metrics stays prompt."""
    socks = []
    for _ in range(SLOW):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sock.setblocking(False)
        socks.append(sock)
    opened, open_ = time.monotonic(), set(range(SLOW))
    failures, scrapes = [], 0
    while open_ and time.monotonic() - opened < HEAD_TIMEOUT_S + 3:
        for i in sorted(open_):
            try:
                socks[i].recv(4096)
                open_.discard(i)  # an answer (408) or the end: either closes it
            except BlockingIOError:
                try:
                    socks[i].send(b"a")
                except OSError:
                    open_.discard(i)
            except OSError:
                open_.discard(i)
        if scrapes < 3 and time.monotonic() - opened > 1.5 * (scrapes + 1):
            scrapes += 1
            if not prompt_metrics(port):
                failures.append(f"{name}: /metrics not answered within 3 s under slowloris")
        time.sleep(1.0)
    if open_:
        failures.append(f"{name}: {len(open_)} slow connections still open after {HEAD_TIMEOUT_S + 3} s")
    for sock in socks:
        sock.close()
    return failures


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the peer closed or reset the connection, read from the kernel (TCP_INFO's state) without reading the
    data still queued: ESTABLISHED is 1."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] != 1


def check_unread(name: str, port: int) -> list[str]:
    """UNREAD connections each pipelining thousands of requests and reading none of the answers: each closed by the
    gateway within the head timeout and a margin, never answered into memory without end."""
    socks = []
    for _ in range(UNREAD):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.settimeout(5)
        _send(sock, get(b"/metrics", H) * 1000)
        socks.append(sock)
    deadline = time.monotonic() + HEAD_TIMEOUT_S + 4
    while time.monotonic() < deadline and not all(map(closed_by_peer, socks)):
        time.sleep(0.2)
    failures = [f"{name}: a connection that reads none of its answers is still open"
                for sock in socks if not closed_by_peer(sock)]
    for sock in socks:
        sock.close()
    return failures


def check_crowd(name: str, port: int) -> list[str]:
    """CROWD idle connections: those over the bound closed at once, the rest by the head timeout; then served."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(CROWD)]

    def closed_within(sock: socket.socket, seconds: float) -> bool:
        sock.settimeout(seconds)
        try:
            sock.recv(4096)  # b"" or a 408: both end it
            return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True

    failures = []
    at_once = sum(closed_within(sock, 0.05) for sock in socks)
    if at_once < CROWD - MAX_CONNECTIONS:
        failures.append(f"{name}: only {at_once} of {CROWD} connections refused at once (bound {MAX_CONNECTIONS})")
    started = time.monotonic()
    lingering = [sock for sock in socks if not closed_within(sock, max(0.05, HEAD_TIMEOUT_S + 3 - (
        time.monotonic() - started)))]
    if lingering:
        failures.append(f"{name}: {len(lingering)} idle connections still open after {HEAD_TIMEOUT_S + 3} s")
    for sock in socks:
        sock.close()
    wait_for(lambda: prompt_metrics(port), 5, f"{name}: /metrics after the crowd")
    return failures


def page_policy() -> str:
    page = (ROOT / "gateway" / "contract" / "status.html").read_text("utf-8")

    def hashes(tag: str) -> str:
        return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
                        for body in re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL))
    return (f"default-src 'none'; script-src {hashes('script')}; style-src {hashes('style')}; connect-src 'self'; "
            "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def test_no_request_stops_or_stalls_the_status_listener(side_by_side, db, monkeypatch):  # noqa: F811
    seed = int(os.environ.get("HTTP_FUZZ_SEED", random.randrange(1 << 30)))
    monkeypatch.setenv("TELEMETRY_METRICS_HOST_NAMES", LISTED)
    t_base_ms = int(time.time() * 1000) - 600_000
    rigs = {}
    for name, (board, gateway, start) in side_by_side().items():
        start()
        rigs[name] = (gateway, TimedWriter(board, Stream(f"http-{name}"), rate=40, t_base_ms=t_base_ms))
    for _, writer in rigs.values():
        writer.start()
    failures: list[str] = []
    # The slowloris and the unread connections stay open while the corpus and the random bytes go to the same
    # listener (a flood closed as slow connections open must not keep those open); the crowd (over the bound) comes
    # last, alone.
    phases = [(lambda n, port: check_corpus(n, port) + check_random(n, port, seed), check_slowloris, check_unread),
              (check_crowd,)]
    with ThreadPoolExecutor(4 * len(rigs)) as pool:
        for phase in phases:
            results = [pool.submit(check, name, gateway.metrics_port) for check in phase
                       for name, (gateway, _) in rigs.items()]
            failures += [failure for result in results for failure in result.result()]
    assert not failures, f"HTTP_FUZZ_SEED={seed}:\n" + "\n".join(failures[:40])

    policy = page_policy()
    least = Counter(str(status) for _, _, statuses, _ in CORPUS for status in statuses if status != 200)
    least.update({"408": SLOW, "dropped": CROWD - MAX_CONNECTIONS, "unread": UNREAD})
    for name, (gateway, writer) in rigs.items():
        assert gateway.process.poll() is None, f"{name} exited:\n{gateway.log()[-3000:]}"
        counted = {status: gateway.metric("telemetry_gateway_http_refused_total", status=status) for status in least}
        assert all(counted[status] >= n for status, n in least.items()), (name, counted, least)
        assert gateway.metric("telemetry_gateway_http_refused_total", status="500") == 0, name
        (page,), _ = exchange(gateway.metrics_port, get(b"/", H, C), 1, [False])
        assert page["status"] == 200 and page["fields"]["content-security-policy"] == policy, (name, page)
        assert gateway.status()["gateway"]["implementation"], name
        sent = {n for n, _, _ in writer.finish()}
        days = {datetime.fromtimestamp((t_base_ms + n) / 1000, timezone.utc).date() for n in sent}
        wait_for(lambda: stored_frames(db, writer.stream.source, days).keys() >= sent, 30,
                 f"{name}: every frame in Cassandra")
        assert_each_frame_once(stored_frames(db, writer.stream.source, days), sent, writer, who=name)
        assert "status_request_failed" not in gateway.log(), name
        assert gateway.stop() == 0, name
