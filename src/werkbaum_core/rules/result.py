"""A tool's answer as both forms an adapter sends: the JSON object and its text.

MCP wants each result twice, as ``structuredContent`` and as text content. For
most tools the text is encoded from the object; an inspect of a large plan is
spliced from the analysis text the engine already holds (and caches), because
encoding a 75 KB analysis again on every call cost more than the cached
analysis itself.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

JSONObject = dict[str, Any]


def to_text(data: Any) -> str:
    """Compact JSON: the text content is read by a model, so no indentation."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@attrs.frozen
class ToolResult:
    """``data`` and ``text`` describe the same JSON value (``json.loads(text) == data``)."""

    data: JSONObject
    text: str

    @classmethod
    def of(cls, data: JSONObject) -> ToolResult:
        return cls(data, to_text(data))

    @classmethod
    def with_first(cls, key: str, value: Any, rest_text: str) -> ToolResult:
        """``{key: value, …rest}`` from the JSON text of the object ``rest``, which
        is parsed once (for ``data``) but not encoded again."""
        rest: JSONObject = json.loads(rest_text)
        if key in rest:
            raise ValueError(f"{key!r} is already in the object")
        head = "{" + to_text(key) + ":" + to_text(value)
        body = rest_text.strip()[1:]
        text = head + ("," + body if rest else body)
        return cls({key: value, **rest}, text)
