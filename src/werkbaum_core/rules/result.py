"""A tool's answer as both forms an adapter sends: the JSON object and its text.

MCP wants each result twice, as ``structuredContent`` and as text content. For
most tools the text is encoded from the object; an inspect of a large plan is
spliced from the analysis text the engine already holds (and caches), because
encoding a 75 KB analysis again on every call cost more than the cached
analysis itself.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import attrs

JSONObject = dict[str, Any]

SHARED_PARSES = 4
SHARED_PARSE_CHARS = 1_000_000
"""Parsed JSON texts kept for reuse: how many, and up to which text length."""


class _SharedParses:
    """The parsed objects of the last few JSON texts, handed out again for an equal text.

    An agent inspects the same plan again and again; the engine answers from its
    cache with the same text, and parsing it again cost ~0.8 ms of a warm call on
    werkbaum.werkbaum. The objects are shared between results, so a result's
    ``data`` is read-only by contract (adapters only serialise it).
    """

    def __init__(self) -> None:
        self._parsed: OrderedDict[str, JSONObject] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> JSONObject:
        with self._lock:
            found = self._parsed.get(text)
            if found is not None:
                self._parsed.move_to_end(text)
                return found
        parsed: JSONObject = json.loads(text)
        if len(text) <= SHARED_PARSE_CHARS:
            with self._lock:
                self._parsed[text] = parsed
                while len(self._parsed) > SHARED_PARSES:
                    self._parsed.popitem(last=False)
        return parsed


_shared_parse = _SharedParses()


def to_text(data: Any) -> str:
    """Compact JSON: the text content is read by a model, so no indentation."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@attrs.frozen
class ToolResult:
    """``data`` and ``text`` describe the same JSON value (``json.loads(text) == data``).

    ``data`` may share nested objects with other results built from the same
    text (:meth:`from_text`, :meth:`with_first`): read it, do not change it.
    """

    data: JSONObject
    text: str

    @classmethod
    def of(cls, data: JSONObject) -> ToolResult:
        return cls(data, to_text(data))

    @classmethod
    def from_text(cls, text: str) -> ToolResult:
        """The result whose JSON text is ``text`` (a JSON object)."""
        return cls(dict(_shared_parse(text)), text)

    @classmethod
    def with_first(cls, key: str, value: Any, rest_text: str) -> ToolResult:
        """``{key: value, …rest}`` from the JSON text of the object ``rest``, which
        is parsed (for ``data``) but not encoded again."""
        rest = _shared_parse(rest_text)
        if key in rest:
            raise ValueError(f"{key!r} is already in the object")
        head = "{" + to_text(key) + ":" + to_text(value)
        body = rest_text.strip()[1:]
        text = head + ("," + body if rest else body)
        return cls({key: value, **rest}, text)
