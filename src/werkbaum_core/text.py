"""Checksums of plan texts, computed host-side.

The upstream ``checksum`` uses Web Crypto, which the embedded executors lack;
the algorithm is fixed by the documents API (§4), so Python computes it.
"""

from __future__ import annotations

import hashlib

MAX_TEXT_CHARS = 2_000_000
"""The backend's text limit; the engine refuses larger inputs before any JS runs."""


def normalize_newlines(text: str) -> str:
    """CRLF, then lone CR, to LF — the documents API's ``normalize`` (§3.1)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def checksum(text: str) -> str:
    """``sha256:`` + hex digest over the UTF-8 of the LF-normalised text."""
    digest = hashlib.sha256(normalize_newlines(text).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"
