"""Which answer a parsed request gets on the [metrics] listener (gateway/contract/status.md, "The listener"), the
Host names it accepts, and the page's Content-Security-Policy: pure functions, no I/O."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import re
from dataclasses import dataclass

PATHS = frozenset({"/", "/status.json", "/metrics", "/healthz"})
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
CLOSING = frozenset({400, 408, 413, 421, 431})  # answers after which the connection is closed

_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*))(?::[0-9]+)?")
_IPV4 = re.compile(r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}")


@dataclass(frozen=True)
class Request:
    """A request head as parsed: every Host value in order; the framing fields as given (None when absent)."""
    method: str
    target: str
    version: str  # "1.1"
    hosts: tuple[str, ...] = ()
    content_length: str | None = None
    transfer_encoding: str | None = None


@dataclass(frozen=True)
class Listener:
    """The listen address's HOST (as configured, brackets allowed) and [metrics] host_names."""
    host: str
    host_names: tuple[str, ...] = ()


def listener(listen: str, host_names=()) -> Listener:
    return Listener(listen.rpartition(":")[0], tuple(host_names))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP literal as the contract spells one (dotted decimal, or IPv6 with or without brackets), else None."""
    if _IPV4.fullmatch(text):
        return ipaddress.IPv4Address(text)
    text = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if ":" not in text or "%" in text:
        return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def _loopback(address) -> bool:
    return address is not None and address.is_loopback


def host_name(value: str) -> str | None:
    """The NAME of a Host value (IPv6 kept in brackets), or None when the value is not NAME or NAME:PORT."""
    match = _HOST.fullmatch(value)
    if match is None:
        return None
    if match["v6"] is not None:
        return f"[{match['v6']}]" if _address(match["v6"]) is not None else None
    return match["name"]


def host_accepted(name: str, where: Listener) -> bool:
    """Whether a Host NAME (from host_name) may be answered on this listener (rule 6)."""
    lowered = name.lower()
    if lowered in (listed.lower() for listed in where.host_names):
        return True
    address, own = _address(name), _address(where.host)
    if lowered == where.host.lower() or (address is not None and address == own):
        return True
    if where.host in WILDCARDS:
        return address is not None or lowered == "localhost"
    if where.host.lower() == "localhost" or _loopback(own):
        return _loopback(address) or lowered == "localhost"
    return False


def decide(request: Request, where: Listener) -> tuple[int, str | None]:
    """The answer's status for a request whose head met the grammar (rule 1 is the parser's), and the path served
    for a 200."""
    if request.version not in ("1.1", "1.0"):
        return 400, None
    if request.method not in KNOWN_METHODS:
        return 400, None
    hosts = request.hosts
    if (len(hosts) != 1 if request.version == "1.1" else len(hosts) > 1):
        return 400, None
    names = [host_name(value) for value in hosts]
    if None in names:
        return 400, None
    length, coding = request.content_length, request.transfer_encoding
    if length is not None and (not length.isdigit() or not length.isascii() or coding is not None):
        return 400, None
    if coding is not None or (length is not None and int(length) != 0):
        return 413, None
    if names and not host_accepted(names[0], where):
        return 421, None
    if request.method not in ("GET", "HEAD"):
        return 405, None
    path = request.target.split("?", 1)[0]
    if not request.target.startswith("/") or path not in PATHS:
        return 404, None
    return 200, path


def _inline_hashes(page: str, tag: str) -> str:
    return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
                    for body in re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL))


def page_csp(page: bytes) -> str:
    """The Content-Security-Policy of the page: its own inline script and style by hash, status.json from itself."""
    text = page.decode("utf-8")
    return (f"default-src 'none'; script-src {_inline_hashes(text, 'script')}; "
            f"style-src {_inline_hashes(text, 'style')}; connect-src 'self'; img-src data:; base-uri 'none'; "
            "form-action 'none'; frame-ancestors 'none'")
