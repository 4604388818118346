"""Checksums of plan texts, computed host-side.

The upstream ``checksum`` uses Web Crypto, which the embedded executors lack;
the algorithm is fixed by the documents API (§4), so Python computes it.
"""

from __future__ import annotations

import hashlib
import re

from werkbaum_core.display import shortened
from werkbaum_core.errors import InvalidArgument, TooLarge

_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_TEXT_CHARS = 2_000_000
"""The backend's text limit; the engine refuses larger inputs before any JS runs."""
MAX_SOURCE_CHARS = 4096
"""Characters of a ``source`` (a path, a document URL, share link or uuid): no real path
(Linux ``PATH_MAX``) or link is longer. Both servers' resolvers refuse longer ones, so
that no error echoes a megabyte back (not in the schemas: every tools/list would pay
for it)."""


def normalize_newlines(text: str) -> str:
    """CRLF, then lone CR, to LF — the documents API's ``normalize`` (§3.1).

    Most plans have no CR at all: one scan for it is cheaper than two replacements
    (each read of a 67 KB plan normalises it twice: checksum and cache key)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def checksum(text: str) -> str:
    """``sha256:`` + hex digest over the UTF-8 of the LF-normalised text.

    A text with a lone surrogate (a Python string can hold one; a JSON text can
    escape one) has no UTF-8 form, so no checksum the documents API defines (§4.1):
    the browser would hash U+FFFD in its place, a Java backend ``?``. It is refused
    as ``invalid_argument`` rather than given a checksum no other party computes.
    """
    try:
        encoded = normalize_newlines(text).encode("utf-8")
    except UnicodeEncodeError:
        found = _SURROGATE.search(text)
        at = found.start() if found else 0
        raise InvalidArgument(
            f"the text holds a lone surrogate (U+{ord(text[at]):04X}) at character {at}: "
            "it is not Unicode text, and has no UTF-8 form to checksum",
            reason="lone_surrogate",
            at=at,
        ) from None
    return f"sha256:{hashlib.sha256(encoded).hexdigest()}"


def check_source_length(source: str, what: str = "source") -> None:
    """``invalid_argument`` for a source over :data:`MAX_SOURCE_CHARS`, quoting its start."""
    if len(source) > MAX_SOURCE_CHARS:
        raise InvalidArgument(
            f"the {what} is longer than {MAX_SOURCE_CHARS:,} characters",
            source=shortened(source, 200),
        )


def check_text_size(text: str, what: str = "text") -> None:
    """Refuse texts over the backend's limit before any JS runs (dukpy has no timeout), and
    anything but a ``str`` (a file's bytes, a path) with a ``TypeError`` that says so."""
    if not isinstance(text, str):
        hint = ": decode it first (data.decode('utf-8'))" if isinstance(text, bytes) else ""
        raise TypeError(f"{what} must be a str, not {type(text).__name__}{hint}")
    check_size(len(text), what)


def check_size(size: int, what: str = "text") -> None:
    """``TooLarge`` for a plan of ``size`` characters over the limit: one condition, one code."""
    if size > MAX_TEXT_CHARS:
        raise TooLarge.over(what, MAX_TEXT_CHARS, size=size)
