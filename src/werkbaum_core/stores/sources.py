"""Document sources (spec §3): which backend URL a source string names, and may we use it.

Pure string work, no I/O, so that a refused source never costs a request:
the remote server must not be talked into fetching arbitrary URLs (SSRF), and
the local server only ever contacts URLs of the documents shape.

Accepted forms, as the editor and ``pull-doc`` accept them (documents-api
§8.1, §11.2): ``http(s)://host[/prefix]/api/v1/documents/<uuid>``, a share
link ``…?live=<document-url>`` (the value percent-encoded or not), and a bare
``<uuid>`` meaning the first configured backend.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

import attrs

from werkbaum_core.errors import ForbiddenSource, InvalidArgument

API_PATH = "/api/v1"
UUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_BARE_UUID = re.compile(UUID_PATTERN)
_DOCUMENT_PATH = re.compile(r"(?P<prefix>.*?)/api/v1/documents/(?P<uuid>" + UUID_PATTERN + r")/*")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SHAPE = "http(s)://host[/prefix]/api/v1/documents/<uuid>, a ?live= share link or a bare <uuid>"
DOC_URI_PREFIX = "werkbaum://doc/"
"""The resource URI of a shared document: this prefix and the URL-encoded document
(its URL, share link or uuid), as the ``werkbaum://doc/{document}`` template names it."""


@attrs.frozen
class DocumentRef:
    """A parsed document source: the backend base URL (before ``/api/v1``) and the uuid."""

    server: str
    uuid: str

    @property
    def url(self) -> str:
        """The canonical document URL; the cache and the error messages key on it."""
        return f"{self.server}{API_PATH}/documents/{self.uuid}"


def looks_like_document(source: str) -> bool:
    """Whether ``source`` has one of the document forms (says nothing about permission)."""
    try:
        _locate(source)
    except InvalidArgument:
        return False
    return True


def document_in_uri(source: str) -> str | None:
    """The document a ``werkbaum://doc/…`` resource URI names (percent-decoded), so that
    a tool takes the URI the resource template describes; None for any other source.

    ``InvalidArgument`` when what follows the prefix is no document source: the URI
    says "document", so it is never taken for a file path.
    """
    if source[: len(DOC_URI_PREFIX)].lower() != DOC_URI_PREFIX:
        return None
    document = unquote(source[len(DOC_URI_PREFIX) :])
    if not looks_like_document(document):
        raise InvalidArgument(
            f"{DOC_URI_PREFIX} takes a URL-encoded document URL, share link or uuid",
            source=source,
        )
    return document


def normalize_server(url: str) -> str:
    """A configured backend in canonical form (``--server`` may end in ``/`` or ``/api/v1``).

    Canonical means: scheme and host lower-cased, default port dropped, no
    trailing slash. Document URLs are reduced the same way, so "is this one of
    our backends" is a plain string comparison that cannot be tricked by case
    or ``:443``.
    """
    parts = _split_http(url.strip(), what="backend URL")
    if parts.query or parts.fragment:
        raise InvalidArgument(f"a backend URL has no query or fragment: {url!r}")
    path = parts.path.rstrip("/")
    if path.endswith(API_PATH):
        path = path[: -len(API_PATH)].rstrip("/")
    return _origin(parts) + path


class SourceParser:
    """Parses sources against the configured backends and enforces the host policy."""

    def __init__(self, servers: Sequence[str] = (), *, allow_any_host: bool = True) -> None:
        self.servers: tuple[str, ...] = tuple(normalize_server(s) for s in servers)
        self.allow_any_host = allow_any_host

    def parse(self, source: str) -> DocumentRef:
        """The document a source names; ``InvalidArgument`` or ``ForbiddenSource`` otherwise."""
        server, uuid = _locate(source)
        if server is None:
            if not self.servers:
                raise InvalidArgument(
                    "a bare document id needs a default backend (--server URL); "
                    "or pass the full document URL",
                    source=source,
                )
            return DocumentRef(self.servers[0], uuid)
        if not self.allow_any_host and server not in self.servers:
            raise ForbiddenSource(
                f"{server} is not one of this server's configured backends",
                source=source,
                allowed=list(self.servers),
            )
        return DocumentRef(server, uuid)


def _locate(source: str) -> tuple[str | None, str]:
    """``(server, uuid)`` of any accepted form; ``server`` is None for a bare uuid."""
    text = source.strip()
    if _BARE_UUID.fullmatch(text):
        return None, text.lower()
    parts = _split_http(text, what="document source")
    live = parse_qs(parts.query).get("live")
    return _document_url(live[0] if live else text)


def _document_url(url: str) -> tuple[str, str]:
    """A document URL's canonical server and uuid; query and fragment are dropped (as live.js)."""
    parts = _split_http(url, what="document URL")
    match = _DOCUMENT_PATH.fullmatch(parts.path)
    if match is None:
        raise InvalidArgument(f"not a Werkbaum document: expected {_SHAPE}", source=url)
    prefix = match["prefix"].rstrip("/")
    return _origin(parts) + prefix, match["uuid"].lower()


def _split_http(url: str, *, what: str) -> SplitResult:
    """``urlsplit`` restricted to http(s) with a host and without credentials.

    Credentials are refused rather than stripped: httpx would turn them into
    an ``Authorization`` header, which the backend meets with its login
    lockout (documents-api §9), and a password never belongs in a source.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - validates the port, raising ValueError
    except ValueError as exc:
        raise InvalidArgument(f"not a valid {what}: {exc}", source=url) from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise InvalidArgument(f"not a {what}: expected {_SHAPE}", source=url)
    if parts.username is not None or parts.password is not None:
        raise InvalidArgument(f"a {what} must not carry credentials", source=url)
    return parts


def _origin(parts: SplitResult) -> str:
    """``scheme://host[:port]``, lower-cased, with the scheme's default port left out."""
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    return f"{scheme}://{host}"
