"""The document store: plans that live as shared documents on a Werkbaum backend.

Edge layer (it speaks HTTP through httpx; it never imports ``mcp``). It turns
the write pipeline's three questions into the documents API (documents-api.md):

- ``read``: ``GET …/documents/<uuid>``; the snapshot's version is the document
  version, and the text is remembered by (document, version) so that a later
  write can diff against exactly what the agent saw (spec §6);
- ``base_text``: the text of the agent's base version — current, remembered,
  or the history's copy — because the backend merges non-overlapping
  concurrent edits only if the ops are computed against the base;
- ``write``: ``PATCH …/content`` with line ops, ``baseVersion``, ``checksum``
  and the identity of spec §7 (``clientId`` ``mcp-<random>``, a running
  ``seq``, ``displayName``). A network failure is retried with the *same*
  ``seq``, so a PATCH the backend applied before the connection dropped is
  replayed, not applied twice (documents-api §5.5).

Errors follow spec §13: a stale base is a ``Conflict`` carrying the current
text and base; an unreachable backend, a 404/410 or a 5xx is
``SourceUnavailable`` with the status and the backend's problem title/detail.
Request bodies are never logged (they hold plan text).

Every call is bounded (:mod:`werkbaum_core.stores.backend_http`): a total
deadline, a cap on calls in flight, and answers read only up to
:data:`MAX_ANSWER_BYTES` — a backend that sends a 300 MB "document" gets
``too_large`` after 12 MB, not a server that grows by gigabytes. A history is
read entry by entry (:mod:`werkbaum_core.stores.json_items`), keeping only
what the store needs of it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import attrs
import httpx

from werkbaum_core.errors import (
    Conflict,
    InvalidArgument,
    SourceUnavailable,
    TooLarge,
    WerkbaumError,
)
from werkbaum_core.lru import BoundedCache, memory_of
from werkbaum_core.stores.backend_http import (
    DEADLINE_SECONDS,
    MAX_BACKEND_CALLS,
    BackendCalls,
    DeadlineTransport,
    read_bounded,
)
from werkbaum_core.stores.json_items import ItemTooLarge, JsonItems, strict_loads
from werkbaum_core.stores.protocol import Base, Op, Snapshot, conflict
from werkbaum_core.stores.sources import DocumentRef, SourceParser, looks_like_document
from werkbaum_core.text import MAX_TEXT_CHARS, checksum, normalize_newlines

__all__ = ["DocumentRef", "DocumentStore", "looks_like_document"]

log = logging.getLogger(__name__)

RETRY_DELAYS = (0.1, 0.3)
"""Pauses between attempts after a network failure: three attempts in well under a second."""

NETWORK_ERRORS = (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError)
"""Failures without a definite HTTP answer: the request may or may not have been applied."""

DISPLAY_NAME_MAX = CLIENT_ID_MAX = 64
"""The backend's limits for ``displayName`` and ``clientId`` (documents-api §2.6), UTF-16."""

MAX_ANSWER_BYTES = 6 * MAX_TEXT_CHARS + 64 * 1024
"""The most a backend answer may hold: a document at the text limit (2,000,000 UTF-16
units) in JSON, even if every unit were a six-byte ``\\u00XX`` escape, plus 64 KiB for
the other fields. No legal document is refused; anything longer is ``too_large``.
The same bound holds for each entry of a history."""

MAX_HISTORY_ENTRIES = 10_000
"""History entries kept (the newest; each without its text): the mirror's commit
message needs the recent ones only."""

KEPT_FIELD_CHARS = 256
"""Characters kept of each short history field (names, ids, timestamps)."""

HISTORY_FIELDS = ("version", "changeType", "displayName", "clientId", "timestamp")
"""What a history entry keeps; the text only for the version asked for."""

UNSETTLED = 1024
"""Documents whose last write has no known outcome, remembered with its seq (the
backend keeps 1,024 (document, client) outcomes too)."""

SNAPSHOT_BYTES = 32_000_000
"""Memory the cached document texts may take in all (four of the largest plans at 4 bytes a
character); the cache keeps at most ``cache_size`` of them besides."""

T = TypeVar("T")


@attrs.frozen
class _Answer:
    """A backend's answer, read whole within :data:`MAX_ANSWER_BYTES`."""

    status_code: int
    headers: httpx.Headers
    body: bytes

    def json(self) -> Any:
        """The body's JSON value; None if it is not JSON a Werkbaum backend sends. Parsed
        once: an answer's check (:meth:`DocumentStore._send`) and its caller both read it,
        and a document's answer may be 12 MB."""
        return self._value

    @functools.cached_property
    def _value(self) -> Any:
        try:
            return strict_loads(self.body)
        except ValueError:
            return None

    @property
    def is_redirect(self) -> bool:
        return self.status_code in (301, 302, 303, 307, 308) and "location" in self.headers


class _Stray(Exception):
    """An answer that cannot be the answer to the request it came for: a backend or a
    middlebox that answered an earlier request on the same kept-alive connection twice
    (that connection then yields every answer one request late). ``error`` is what the
    request fails with if the answer on another connection cannot belong to it either."""

    def __init__(self, error: WerkbaumError) -> None:
        super().__init__(error.message)
        self.error = error


class _DocumentLock:
    """A document's write lock and how many writers hold or wait for it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class DocumentStore:
    """Shared documents on Werkbaum backends; implements the ``Store`` protocol; thread-safe.

    One store is one writer: it owns one ``clientId`` and one running ``seq``
    (the editor's per-tab identity, documents-api §7.1-§7.2). Writes to one
    document are serialised, so the backend sees this client's seqs in
    increasing order (a lower seq would be refused with 422).

    Each public method is one call: admitted only while fewer than
    ``max_calls`` run (else ``source_unavailable`` at once), finished within
    ``deadline`` seconds in total, retries included (``timeout`` still bounds
    each connect and read). A ``transport`` passed in (tests inject faults
    with one) replaces the deadline transport; the deadline is then checked
    between attempts only.
    """

    def __init__(
        self,
        servers: Sequence[str] = (),
        *,
        allow_any_host: bool = True,
        client_id: str | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 10.0,
        deadline: float = DEADLINE_SECONDS,
        max_calls: int = MAX_BACKEND_CALLS,
        cache_size: int = 64,
    ) -> None:
        self._parser = SourceParser(servers, allow_any_host=allow_any_host)
        self.client_id = client_id or "mcp-" + secrets.token_hex(8)
        if _clip_utf16(self.client_id, CLIENT_ID_MAX) != self.client_id:
            raise InvalidArgument("a clientId has at most 64 characters")
        self._calls = BackendCalls(max_calls, deadline)
        self._client = httpx.Client(
            transport=transport or DeadlineTransport(self._calls),
            timeout=timeout,
            follow_redirects=False,  # a redirect could lead to any host (SSRF); never follow
            headers={
                "Accept": "application/json",
                # Compressed answers could expand far beyond the size bound while decoded.
                "Accept-Encoding": "identity",
                "User-Agent": "werkbaum-mcp",
            },
        )
        self._cache: BoundedCache[tuple[str, int], Snapshot] = BoundedCache(
            cache_size, SNAPSHOT_BYTES, lambda snapshot: memory_of(snapshot.text)
        )
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._unsettled: BoundedCache[str, tuple[Base, str, int, int]] = BoundedCache(UNSETTLED)
        self._newest: BoundedCache[str, int] = BoundedCache(UNSETTLED)
        """The newest version seen of each document: a write's answer must name a later one."""
        self._doc_locks: dict[str, _DocumentLock] = {}
        """The documents being written now, each with its lock (gone with its last writer)."""
        self._doc_locks_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def servers(self) -> tuple[str, ...]:
        """The configured backends in canonical form; the first is the default for bare uuids."""
        return self._parser.servers

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> DocumentStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------------

    def parse(self, source: str) -> DocumentRef:
        """The document a source names (``InvalidArgument``/``ForbiddenSource`` if none may)."""
        return self._parser.parse(source)

    def probe(self) -> None:
        """``GET /api/v1/info`` on every configured backend, so a typo fails at start-up."""
        for server in self.servers:
            url = f"{server}/api/v1/info"
            with self._calls.call(server):
                response = self._send("GET", url, source=server)
            body = response.json() if response.status_code == 200 else None
            if not isinstance(body, dict) or not body.get("name"):
                raise SourceUnavailable(
                    f"{server} is not a Werkbaum backend (GET /api/v1/info answered "
                    f"{response.status_code})",
                    server=server,
                    **_problem(response),
                )

    def read(self, source: str) -> Snapshot:
        ref = self.parse(source)
        with self._calls.call(source):
            return self._fetch(ref, source)

    def read_titled(self, source: str) -> tuple[Snapshot, str]:
        """The snapshot and the document's title, from one ``GET``."""
        ref = self.parse(source)
        with self._calls.call(source):
            body = self._document(ref, source)
            title = body.get("title")
            if not isinstance(title, str):
                raise _not_werkbaum(ref, source)
            return self._snapshot(ref, source, body), title

    def history(self, source: str) -> list[dict[str, Any]]:
        """``GET …/history``, oldest first: per entry only :data:`HISTORY_FIELDS`, no text.

        At most the newest :data:`MAX_HISTORY_ENTRIES`; each entry is bounded
        by :data:`MAX_ANSWER_BYTES` (``too_large`` beyond).
        """
        ref = self.parse(source)
        with self._calls.call(source):
            return self._history(ref, source, None)[0]

    def changes(self, source: str, since: int) -> list[dict[str, Any]]:
        """The history's entries after version ``since``, oldest first, as the change feed
        names them (``GET …/changes?since=N&wait=0``, documents-api §2.11): per entry only
        :data:`HISTORY_FIELDS` (version, changeType, clientId, displayName).

        What the git mirror names in a commit body. The history itself carries every
        milestone with its whole text, so reading it after every write cost more the
        older a document got (82 MB and 1.2 s at 1,200 milestones of a 68 KB plan); the
        feed has no texts but, at most, the one of the newest version.
        """
        ref = self.parse(source)
        with self._calls.call(source):
            answer = self._send("GET", f"{ref.url}/changes?since={since}&wait=0", source=source)
            if answer.status_code == 204:
                return []  # nothing after ``since``
            if answer.status_code != 200:
                raise _http_error(answer, ref, source)
            body = answer.json()
            events = body.get("events") if isinstance(body, dict) else None
            if not isinstance(events, list):
                raise _not_werkbaum(ref, source)
            kept = events[-MAX_HISTORY_ENTRIES:]
            return [_summary(event) for event in kept if isinstance(event, dict)]

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        """The text of ``base.version`` and the current snapshot (spec §6).

        An older base comes from this store's cache or the history; it must
        hash to ``base.checksum``, otherwise the ops would be computed against
        a text the backend does not mean by that version (it would refuse
        them with 422 at best).
        """
        ref = self.parse(source)
        with self._calls.call(source):
            current = self._fetch(ref, source)
            version = base.version
            if version is None or isinstance(version, bool) or not isinstance(version, int):
                raise _conflict(source, current, "a document base needs the version you read")
            if version == current.base.version:
                if base.checksum != current.base.checksum:
                    raise _conflict(source, current, "the checksum does not match that version")
                return current.text, current
            if version > (current.base.version or 0):
                raise _conflict(source, current, "the base version is newer than the document")
            text = self._known_base(ref, base)
            if text is None:
                text = self._history_base(ref, source, version, base.checksum)
            if text is None:
                raise _conflict(source, current, f"the text of version {version} is not available")
            return text, current

    # -- writing -----------------------------------------------------------------------

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        """``PATCH …/content``; returns exactly what the backend stores afterwards."""
        ref = self.parse(source)
        with self._calls.call(source):
            if base.version is None or isinstance(base.version, bool):
                raise _conflict(source, self._fetch(ref, source), "a document base needs a version")
            with self._doc_lock(ref.url):
                change = json.dumps(ops, sort_keys=True)
                seq, first_floor = self._seq_for(ref.url, base, change)
                body: dict[str, Any] = {
                    "baseVersion": base.version,
                    "checksum": base.checksum,
                    "clientId": self.client_id,
                    "seq": seq,
                    "ops": ops,
                }
                name = _clip_utf16(author, DISPLAY_NAME_MAX)
                if name:
                    body["displayName"] = name
                # Every write makes a new version, later than any seen before it was first
                # sent: a replay's answer is the first send's (versions seen since, such as
                # the one that write made, do not count).
                floor = first_floor
                if floor is None:
                    floor = max(_int(base.version) or 0, self._newest.get(ref.url) or 0)
                try:
                    response = self._send(
                        "PATCH",
                        f"{ref.url}/content",
                        source=source,
                        body=body,
                        check=lambda answer: _patch_answer_error(answer, ref, source, floor),
                    )
                except WerkbaumError as exc:  # sent, and no usable answer (lost, too large, …)
                    raise self._unsettled_write(ref.url, (base, change, seq, floor), exc) from exc
                if response.status_code >= 500:  # a gateway's answer: applied or not, unknown
                    error = _http_error(response, ref, source)
                    raise self._unsettled_write(ref.url, (base, change, seq, floor), error)
                self._unsettled.discard(ref.url)
                return self._outcome(ref, source, base, ops, response)

    def _seq_for(self, url: str, base: Base, change: str) -> tuple[int, int | None]:
        """The seq of this change and the version floor of its first send: those it was
        sent with before if that write is unsettled (the backend then replays its
        outcome instead of applying it twice, documents-api §5.5), else the next seq
        and None."""
        unsettled = self._unsettled.get(url)
        if unsettled is not None and unsettled[:2] == (base, change):
            return unsettled[2], unsettled[3]
        return self._next_seq(), None

    def _unsettled_write(
        self, url: str, sent: tuple[Base, str, int, int], error: WerkbaumError
    ) -> WerkbaumError:
        """The write may have been applied: remember how it was sent, and say so.

        Only this store (one server process, one ``clientId``) can have the backend
        replay it: another worker or replica that gets the same call sends it as a new
        change, and an insert would land twice. So the advice is to read first.
        """
        self._unsettled.put(url, sent)
        message = (
            f"{error.message}; the backend may have applied the change: read the document "
            "before you write it again (the same call again with the same base is applied "
            "at most once only when this server process gets it)"
        )
        return type(error)(message, **{**error.details, "applied": "unknown"})

    def _outcome(
        self, ref: DocumentRef, source: str, base: Base, ops: list[Op], response: _Answer
    ) -> Snapshot:
        status = response.status_code
        if status == 200:
            return self._accepted(ref, source, base, ops, response.json())
        if status == 409:
            raise self._conflicted(ref, source, base, response.json())
        if status == 422:
            raise self._unapplicable(ref, source, base, response)
        raise _http_error(response, ref, source)

    def _accepted(
        self, ref: DocumentRef, source: str, base: Base, ops: list[Op], body: Any
    ) -> Snapshot:
        """The snapshot after a 200 (also a replayed one; :func:`_patch_answer_error`
        has made sure it can be this write's answer).

        The answer carries the new version but no text. Without a merge the
        text is ``apply(base, ops)``, computed here exactly as the backend
        does. After a merge (``opsSinceBase`` not empty) the store re-reads;
        only if someone wrote again in between does it fall back to its own
        reconstruction, so that the snapshot is that of *this* write's version.
        """
        version, since = body["version"], body["opsSinceBase"]
        expected = _merge(self._known_base(ref, base), ops, since)
        if since == [] and expected is not None:
            return self._remember(ref, expected, version)
        try:
            current = self._fetch(ref, source)
        except WerkbaumError as exc:  # the change is in: only its text is not known
            if expected is not None:
                return self._remember(ref, expected, version)
            message = (
                f"{exc.message}; the change was applied (version {version}): read the "
                "document for its text, do not write it again"
            )
            details = {**exc.details, "applied": True, "version": version}
            raise type(exc)(message, **details) from exc
        if current.base.version == version or expected is None:
            return current
        return self._remember(ref, expected, version)

    def _conflicted(self, ref: DocumentRef, source: str, base: Base, body: Any) -> Conflict:
        """409: the current text is ``apply(base, opsSinceBase)`` (documents-api §5.3)."""
        reason = "someone else changed the same lines since your base"
        version = _int(body.get("currentVersion")) if isinstance(body, dict) else None
        since = body.get("opsSinceBase") if isinstance(body, dict) else None
        rebuilt = _merge(self._known_base(ref, base), [], since)
        if rebuilt is not None and version is not None:
            return _conflict(source, self._remember(ref, rebuilt, version), reason)
        return _conflict(source, self._fetch(ref, source), reason)

    def _unapplicable(
        self, ref: DocumentRef, source: str, base: Base, response: _Answer
    ) -> WerkbaumError:
        """422: re-read once; a changed document is a conflict, anything else is reported."""
        problem = _problem(response)
        current = self._fetch(ref, source)
        if current.base.version != base.version or current.base.checksum != base.checksum:
            reason = f"the backend refused your base: {problem.get('detail') or 'stale base'}"
            return _conflict(source, current, reason)
        return SourceUnavailable(
            f"{ref.url} refused the change (422 {problem.get('title') or ''}): "
            f"{problem.get('detail') or 'no detail'}",
            source=source,
            **problem,
        )

    def _next_seq(self) -> int:
        with self._seq_lock:
            self._seq += 1
            return self._seq

    @contextlib.contextmanager
    def _doc_lock(self, url: str) -> Iterator[None]:
        """One write at a time per document (its ``seq``s), held over the network calls.

        The entry lives while someone holds or waits for it: a server that writes
        thousands of documents in its life keeps no lock for each of them.
        """
        with self._doc_locks_lock:
            entry = self._doc_locks.setdefault(url, _DocumentLock())
            entry.users += 1
        try:
            with entry.lock:
                yield
        finally:
            with self._doc_locks_lock:
                entry.users -= 1
                if not entry.users:
                    del self._doc_locks[url]

    # -- HTTP --------------------------------------------------------------------------

    def _send(
        self,
        method: str,
        url: str,
        *,
        source: str,
        body: dict[str, Any] | None = None,
        check: Callable[[_Answer], WerkbaumError | None] | None = None,
    ) -> _Answer:
        """One request, read whole within the size bound (:meth:`_exchange`); ``check``
        names why an answer cannot belong to the request (then it is not taken)."""
        whole = _whole(source)

        def read(response: httpx.Response) -> _Answer:
            answer = whole(response)
            error = check(answer) if check is not None else None
            if error is not None:
                raise _Stray(error)
            return answer

        return self._exchange(method, url, source=source, body=body, read=read)

    def _exchange(
        self,
        method: str,
        url: str,
        *,
        source: str,
        read: Callable[[httpx.Response], T],
        body: dict[str, Any] | None = None,
    ) -> T:
        """One request, retried on network failures with the identical body (same ``seq``),
        within the call's deadline; ``read`` takes the answer while it streams in.

        An answer ``read`` finds cannot belong to the request (:class:`_Stray`) is not
        taken: its connection is closed, so that nothing else is sent there, and the
        identical request goes once more on another one (a PATCH with the same ``seq``
        is then replayed by the backend, never applied twice).
        """
        delays = iter(RETRY_DELAYS)
        strays = 0
        while True:
            try:
                with self._client.stream(method, url, json=body) as response:
                    try:
                        return read(response)
                    except _Stray as stray:
                        _hang_up(response)
                        strays += 1
                        if strays > 1:
                            raise stray.error from None
                        log.warning(
                            "%s %s: %s; asking again on another connection", method, url, stray
                        )
            except NETWORK_ERRORS as exc:
                if self._calls.expired():
                    raise SourceUnavailable(
                        f"the backend for {url} did not answer within the "
                        f"{self._calls.deadline:g} s deadline",
                        source=source,
                        deadline=self._calls.deadline,
                    ) from exc
                delay = next(delays, None)
                left = self._calls.remaining()
                if delay is None or (left is not None and left <= delay):
                    raise SourceUnavailable(
                        f"the backend for {url} cannot be reached ({type(exc).__name__}: {exc})",
                        source=source,
                    ) from exc
                log.warning("%s %s: %s; retrying", method, url, type(exc).__name__)
                time.sleep(delay)
            except httpx.HTTPError as exc:
                raise SourceUnavailable(
                    f"request to {url} failed ({type(exc).__name__}: {exc})", source=source
                ) from exc

    def _document(self, ref: DocumentRef, source: str) -> dict[str, Any]:
        response = self._send(
            "GET", ref.url, source=source, check=lambda a: _document_error(a, ref, source)
        )
        if response.status_code != 200:
            raise _http_error(response, ref, source)
        body: dict[str, Any] = response.json()
        return body

    def _fetch(self, ref: DocumentRef, source: str) -> Snapshot:
        """GET the document into a snapshot (LF-normalised) and remember its text."""
        return self._snapshot(ref, source, self._document(ref, source))

    def _snapshot(self, ref: DocumentRef, source: str, body: dict[str, Any]) -> Snapshot:
        content, version = body.get("content"), _int(body.get("version"))
        if not isinstance(content, str) or version is None:
            raise _not_werkbaum(ref, source)
        snapshot = self._remember(ref, content, version)
        served = body.get("checksum")
        if isinstance(served, str) and served != snapshot.base.checksum:
            raise SourceUnavailable(
                f"{ref.url}: the backend's checksum disagrees with the text it sent",
                source=source,
            )
        return snapshot

    def _history(
        self, ref: DocumentRef, source: str, text_of: int | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """The history's entries (:data:`HISTORY_FIELDS`) and the text of version ``text_of``."""

        def read(response: httpx.Response) -> tuple[list[dict[str, Any]], str | None]:
            if response.status_code != 200:
                raise _http_error(_whole(source)(response), ref, source)
            _check_identity(response, source)
            entries: deque[dict[str, Any]] = deque(maxlen=MAX_HISTORY_ENTRIES)
            text: str | None = None
            items = JsonItems(MAX_ANSWER_BYTES)
            try:
                for chunk in response.iter_bytes():  # identity only (_check_identity)
                    for item in items.feed(chunk):
                        if not isinstance(item, dict):
                            raise _Stray(_not_werkbaum(ref, source))
                        entries.append(_summary(item))
                        content = item.get("content")
                        if text_of is not None and item.get("version") == text_of:
                            text = content if isinstance(content, str) else None
                items.close()
            except ItemTooLarge as exc:
                raise _too_large(source, f"an entry of {ref.url}/history") from exc
            except ValueError as exc:  # not a list: perhaps another request's answer
                raise _Stray(_not_werkbaum(ref, source)) from exc
            return list(entries), text

        return self._exchange("GET", f"{ref.url}/history", source=source, read=read)

    # -- base texts --------------------------------------------------------------------

    def _remember(self, ref: DocumentRef, text: str, version: int) -> Snapshot:
        normalized = normalize_newlines(text)  # the limit counts the text the plan is
        if len(normalized) > MAX_TEXT_CHARS:
            what = f"{ref.url} version {version}"
            raise TooLarge.over(what, MAX_TEXT_CHARS, size=len(normalized), source=ref.url)
        snapshot = Snapshot(text=normalized, base=Base(checksum(normalized), version))
        self._cache.put((ref.url, version), snapshot)
        if version > (self._newest.get(ref.url) or 0):
            self._newest.put(ref.url, version)
        return snapshot

    def _known_base(self, ref: DocumentRef, base: Base) -> str | None:
        """The base text this store served earlier, if it still hashes to the base's checksum."""
        version = _int(base.version)
        if version is None:
            return None
        cached = self._cache.get((ref.url, version))
        if cached is None or cached.base.checksum != base.checksum:
            return None
        return cached.text

    def _history_base(
        self, ref: DocumentRef, source: str, version: int, expected: str
    ) -> str | None:
        """The base text from ``GET /history`` (milestones plus the latest entry only).

        A sync version that is neither a milestone nor the latest is not in
        the history (documents-api §2.10, §5.4); then there is no copy.
        """
        content = self._history(ref, source, version)[1]
        if content is None:
            return None
        snapshot = self._remember(ref, content, version)  # normalised and hashed once
        return snapshot.text if snapshot.base.checksum == expected else None


# -- line ops (documents-api §3): only what reconstructing a text needs -------------------


def _merge(base_text: str | None, mine: list[Op], since: Any) -> str | None:
    """``apply(apply(base, since), shift(mine, since))``: the text after a backend merge.

    None when there is nothing to compute from (unknown base, malformed ops).
    """
    if base_text is None or not isinstance(since, list):
        return None
    try:
        current = _apply(base_text.split("\n"), since)
        merged = _apply(current, [_shifted(op, since) for op in mine])
    except (ValueError, TypeError, KeyError):
        return None
    return "\n".join(merged)


def _parts(op: Op) -> tuple[int, int, list[str]]:
    """``(index, removed, inserted lines)`` of one op; ``ValueError`` if malformed."""
    kind, index, count = op["op"], _int(op["index"]), _int(op.get("count"))
    lines = op.get("lines") or []
    if index is None or not isinstance(lines, list):
        raise ValueError("malformed op")
    if kind == "insert":
        return index, 0, [str(line) for line in lines]
    if kind not in ("delete", "replace") or count is None:
        raise ValueError("malformed op")
    return index, count, [] if kind == "delete" else [str(line) for line in lines]


def _apply(lines: list[str], ops: list[Op]) -> list[str]:
    """§3.3: ops ascending and non-overlapping, indices on ``lines``; a forward walk."""
    out: list[str] = []
    cursor = 0
    for op in ops:
        index, removed, inserted = _parts(op)
        if removed < 0 or index < cursor or index + removed > len(lines):
            raise ValueError("ops do not apply")
        out.extend(lines[cursor:index])
        out.extend(inserted)
        cursor = index + removed
    out.extend(lines[cursor:])
    return out


def _shifted(op: Op, theirs: list[Op]) -> Op:
    """§3.6: move ``op`` by the line delta of every foreign op that ends at or before it."""
    index = _parts(op)[0]
    delta = 0
    for other in theirs:
        start, removed, inserted = _parts(other)
        if start + removed <= index:
            delta += len(inserted) - removed
    return {**op, "index": index + delta}


# -- helpers -------------------------------------------------------------------------------


def _int(value: object) -> int | None:
    """``value`` if it is a JSON integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _clip_utf16(text: str, limit: int) -> str:
    """The longest prefix of at most ``limit`` UTF-16 code units (the backend is Java)."""
    units = 0
    for i, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text


def _whole(source: str) -> Callable[[httpx.Response], _Answer]:
    """Read an answer whole, or ``too_large`` once it passes :data:`MAX_ANSWER_BYTES`."""

    def read(response: httpx.Response) -> _Answer:
        _check_identity(response, source)
        body = read_bounded(response, MAX_ANSWER_BYTES)
        if body is None:
            raise _too_large(source, f"the answer to {response.request.url}")
        return _Answer(response.status_code, response.headers, body)

    return read


def _hang_up(response: httpx.Response) -> None:
    """Close the connection ``response`` came on (httpx's documented ``network_stream``
    extension), so that the pool drops it instead of sending the next request there."""
    stream = response.extensions.get("network_stream")
    close = getattr(stream, "close", None)
    if callable(close):
        close()


def _document_error(answer: _Answer, ref: DocumentRef, source: str) -> WerkbaumError | None:
    """Why a 200 to ``GET`` of ``ref`` cannot be its document (None if it can)."""
    if answer.status_code != 200:
        return None
    body = answer.json()
    if not isinstance(body, dict):
        return _not_werkbaum(ref, source)
    named = body.get("id")
    if isinstance(named, str) and named.lower() != ref.uuid.lower():
        return SourceUnavailable(
            f"{ref.url} was answered with document {named[:64]}; not taken", source=source
        )
    if not isinstance(body.get("content"), str) or _int(body.get("version")) is None:
        return _not_werkbaum(ref, source)
    return None


def _patch_answer_error(
    answer: _Answer, ref: DocumentRef, source: str, floor: int
) -> WerkbaumError | None:
    """Why a 200 to a ``PATCH`` cannot be its answer (None if it can): the answer is
    ``{version, opsSinceBase}`` with a version later than ``floor`` (the base's, and
    every one seen before the PATCH went out), never a document with its text."""
    if answer.status_code != 200:
        return None
    body = answer.json()
    version = _int(body.get("version")) if isinstance(body, dict) else None
    if (
        not isinstance(body, dict)
        or "content" in body
        or not isinstance(body.get("opsSinceBase"), list)
        or version is None
        or version <= floor
    ):
        return SourceUnavailable(
            f"{ref.url}/content answered the change with something that cannot be its "
            f"answer (no version after {floor}); not taken",
            source=source,
        )
    return None


def _check_identity(response: httpx.Response, source: str) -> None:
    """Refuse a compressed answer: it was not asked for, and it could expand without bound."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise SourceUnavailable(
            f"{response.request.url} answered with Content-Encoding {encoding}, "
            "though only identity was accepted",
            source=source,
        )


def _too_large(source: str, what: str) -> TooLarge:
    """An answer cut off at :data:`MAX_ANSWER_BYTES`: its text's size is not known."""
    json_bytes = f"{MAX_ANSWER_BYTES:,} bytes of JSON"
    return TooLarge.over(what, MAX_TEXT_CHARS, note=json_bytes, source=source)


def _summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The fields of a history entry the store keeps, short strings clipped."""
    kept = {key: entry[key] for key in HISTORY_FIELDS if key in entry}
    return {
        key: value[:KEPT_FIELD_CHARS] if isinstance(value, str) else value
        for key, value in kept.items()
        if isinstance(value, str | int | float | bool) or value is None
    }


def _problem(response: _Answer) -> dict[str, Any]:
    """Status and the backend's problem ``title``/``detail`` (RFC 9457), for error details."""
    out: dict[str, Any] = {"status": response.status_code}
    body = response.json()
    if isinstance(body, dict):
        for key in ("title", "detail"):
            if isinstance(body.get(key), str):
                out[key] = body[key]
    if response.is_redirect:
        out["location"] = response.headers.get("location")
    return out


def _http_error(response: _Answer, ref: DocumentRef, source: str) -> WerkbaumError:
    """An HTTP answer other than the expected one, as a typed error (spec §13)."""
    problem = _problem(response)
    status = response.status_code
    said = ": ".join(str(problem[k]) for k in ("title", "detail") if k in problem)
    if status == 400:
        message = f"{ref.url} refused the request: {said or 'bad request'}"
        return InvalidArgument(message, source=source, **problem)
    if response.is_redirect:
        said = f"redirect to {problem.get('location')} (not followed)"
    message = f"{ref.url} answered {status}" + (f": {said}" if said else "")
    return SourceUnavailable(message, source=source, **problem)


def _not_werkbaum(ref: DocumentRef, source: str) -> SourceUnavailable:
    return SourceUnavailable(f"{ref.url} did not answer like a Werkbaum backend", source=source)


def _conflict(source: str, current: Snapshot, reason: str) -> Conflict:
    """The pipeline's conflict (current text and base), plus why, for the agent's next step."""
    error = conflict(source, current)
    error.details["reason"] = reason
    return error
