"""The items of a JSON array, decoded one at a time while its bytes arrive.

A document's history (``GET …/history``) carries the whole text in every
entry, so it grows with every milestone and has no size limit of its own. The
store needs little of it — the version numbers and names, and at most one
entry's text — so it reads the array item by item: memory holds one item (at
most ``item_limit`` characters) and whatever the caller keeps of the earlier
ones, however long the history is.

The scanner only tracks nesting and string boundaries (a regex jump to the
next character that matters); each complete item is parsed by :mod:`json`.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

_OUTSIDE = re.compile(r'["\[\]{},]')
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)


class ItemTooLarge(ValueError):
    """One item of the array is longer than the limit."""


def strict_loads(text: str | bytes) -> Any:
    """A backend's JSON value, or ``ValueError``: malformed, nested past Python's
    recursion limit, or holding a lone surrogate (``"\\ud800"``: no text another
    program can read, and it would fail later, in a checksum or an answer)."""
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise ValueError("the JSON is nested too deeply") from exc
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                _check_text(key)
                stack.append(inner)
    return value


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError("a JSON string holds a lone surrogate") from exc


class JsonItems:
    """Feed bytes with :meth:`feed`, get the completed items; :meth:`close` at the end.

    Malformed input raises :class:`ValueError` (from the scanner or from
    :func:`strict_loads`), an item over ``item_limit`` characters
    :class:`ItemTooLarge` as soon as it is that long.
    """

    def __init__(self, item_limit: int) -> None:
        self._limit = item_limit
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._finished = False
        self._pieces: list[str] = []
        self._size = 0
        self._items = 0

    def feed(self, data: bytes) -> list[Any]:
        return self._scan(self._decoder.decode(data))

    def close(self) -> None:
        rest = self._scan(self._decoder.decode(b"", final=True))
        if rest or not self._finished:
            raise ValueError("the JSON array is incomplete")

    def _scan(self, text: str) -> list[Any]:
        done: list[Any] = []
        pos = 0
        start = 0 if self._depth else None  # where the current item's text begins
        while pos < len(text):
            if self._finished:
                if text[pos:].strip():
                    raise ValueError("text after the JSON array")
                return done
            if self._in_string:
                if self._escaped:
                    self._escaped, pos = False, pos + 1
                    continue
                pos = _STRING_BODY.match(text, pos).end()  # type: ignore[union-attr]
                if pos < len(text):  # at the closing quote, or at a backslash that ends the text
                    self._escaped = text[pos] == "\\"
                    self._in_string = self._escaped
                    pos += 1
                continue
            if self._depth == 0:
                rest = text[pos:].lstrip()
                if rest and rest[0] != "[":
                    raise ValueError("not a JSON array")
                if not rest:
                    break
                self._depth, pos = 1, len(text) - len(rest) + 1
                start = pos
                continue
            found = _OUTSIDE.search(text, pos)
            if found is None:
                break
            char, at, pos = found.group(), found.start(), found.end()
            if char == '"':
                self._in_string = True
            elif char in "[{":
                self._depth += 1
            elif self._depth > 1:
                if char != ",":
                    self._depth -= 1
            elif char == "}":
                raise ValueError("unbalanced JSON array")
            else:  # "," or "]" at the array's own level: an item ends
                assert start is not None
                item = "".join(self._pieces) + text[start:at]
                self._pieces, self._size = [], 0
                self._check(len(item))
                if item.strip() or char == "," or self._items:
                    done.append(strict_loads(item))
                    self._items += 1
                self._finished = char == "]"
                start = pos
        if start is not None and self._depth and not self._finished:
            piece = text[start:]
            self._size += len(piece)
            self._check(self._size)
            self._pieces.append(piece)
        return done

    def _check(self, size: int) -> None:
        if size > self._limit:
            raise ItemTooLarge(f"an item is longer than {self._limit:,} characters")
