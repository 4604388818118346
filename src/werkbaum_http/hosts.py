"""The ``Host`` and ``Origin`` checks against DNS rebinding, with exact host-and-port matching.

A page on ``evil.example`` whose name an attacker re-points at 127.0.0.1 can
make a browser send requests here; they carry ``Host: evil.example`` (and an
``Origin``), which is how they are told apart. The SDK's own check matched
``127.0.0.1:*`` by string prefix — ``127.0.0.1:x.evil.example`` passed — and
compared names case-sensitively. So both headers are parsed here into a host
and a port and compared exactly:

- ``--allowed-host NAME`` allows ``Host: NAME`` without a port;
  ``NAME:PORT`` exactly that port; ``NAME:*`` any port number (1-65535).
- Names compare case-insensitively (DNS does: ``LOCALHOST:8000`` is
  ``localhost:8000``); an IPv6 address is written in brackets, ``[::1]:*``.
- A ``Host`` that is not a well-formed ``name[:port]`` is refused, as is a
  request with no or several ``Host`` headers: ``421``.
- A browser's ``Origin`` must be ``http://`` or ``https://`` and an allowed
  host; ``null`` or anything else is ``403``. Non-browser clients send none.

The check runs before authentication and before the SDK (whose own check is
then off), on every path but ``/healthz``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

import attrs
from starlette.types import ASGIApp, Receive, Scope, Send

from werkbaum_http.responses import TEXT, respond

REFUSED_HOST = (
    b"Invalid Host header: this server answers only the host names its operator allowed "
    b"(werkbaum-mcp-http --allowed-host NAME:*)\n"
)
"""The ``421`` body: what a person at a client needs to tell the operator (the allowed
names themselves are not listed)."""

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_NAME = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}")
_PORT = re.compile(r"[0-9]{1,5}")


def split_host(value: str) -> tuple[str, str | None] | None:
    """``(host, port)`` of a ``Host`` value (``name``, ``name:port``, ``[v6]:port``), lower-cased;
    None if it is not one."""
    text = value.strip().lower()
    if text.startswith("["):
        address, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        try:
            host = f"[{ipaddress.IPv6Address(address).compressed}]"
        except ValueError:
            return None
        if rest and port is None:
            return None
    else:
        host, colon, given = text.partition(":")
        port = given if colon else None
        if _NAME.fullmatch(host) is None or len(host) > 253:
            return None
    if port is not None and not (_PORT.fullmatch(port) and 0 < int(port) < 65536):
        return None
    return host, port


@attrs.frozen
class HostPattern:
    """One ``--allowed-host``: a host, and no port, one port, or ``*`` (any)."""

    host: str
    port: str | None

    @classmethod
    def parse(cls, text: str) -> HostPattern:
        """``ValueError`` (with the reason) for a pattern that could never match."""
        wildcard = text.strip().lower().endswith(":*")
        split = split_host(text.strip()[:-2] if wildcard else text)
        if split is None or (wildcard and split[1] is not None):
            raise ValueError(
                f"--allowed-host {text!r} is not NAME, NAME:PORT or NAME:* "
                "(an IPv6 address in brackets, e.g. [::1]:*)"
            )
        return cls(host=split[0], port="*" if wildcard else split[1])

    def matches(self, host: str, port: str | None) -> bool:
        if host != self.host:
            return False
        return port is not None if self.port == "*" else port == self.port


@attrs.frozen
class AllowedHosts:
    patterns: tuple[HostPattern, ...]

    @classmethod
    def parse(cls, texts: Sequence[str]) -> AllowedHosts:
        return cls(tuple(HostPattern.parse(text) for text in texts))

    def allows(self, value: str) -> bool:
        split = split_host(value)
        return split is not None and any(p.matches(*split) for p in self.patterns)

    def allows_origin(self, origin: str) -> bool:
        scheme, sep, rest = origin.strip().partition("://")
        if not sep or scheme.lower() not in ("http", "https") or "/" in rest or "@" in rest:
            return False
        return self.allows(rest)


def loopback(host: str) -> bool:
    """Whether ``--host`` listens on this machine only (then only local clients can call)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


class HostCheck:
    """ASGI middleware: ``421`` for a ``Host``, ``403`` for an ``Origin`` that is not allowed."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = [v for k, v in scope["headers"] if k == b"host"]
        origins = [v for k, v in scope["headers"] if k == b"origin"]
        if len(hosts) != 1 or not self.allowed.allows(hosts[0].decode("latin-1")):
            await respond(send, 421, REFUSED_HOST, content_type=TEXT)
            return
        if len(origins) > 1 or (
            origins and not self.allowed.allows_origin(origins[0].decode("latin-1"))
        ):
            await respond(send, 403, b"Invalid Origin header", content_type=TEXT)
            return
        await self.app(scope, receive, send)
