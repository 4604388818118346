"""The display form of names and text that came from outside: valid text, and safe on a terminal.

On Linux a file name is bytes. Python hands a name that is not UTF-8 over as
a ``str`` with the undecodable bytes as lone surrogates (``surrogateescape``:
byte ``0xE9`` becomes ``U+DCE9``); a root, a ``--plan-glob`` value, a symlink
target and every name ``os.scandir`` returns may carry them. Such a ``str``
cannot be encoded as UTF-8: put into a JSON answer, an error message, the
server instructions or a log line, it makes the whole answer fail. Plan text
is foreign data besides: a label can hold ``ESC ]0;…`` (set the terminal's
title), ``ESC [2K`` (erase the line, then forge another) or a bidi override
that shows the line in another order.

So every such value is shown in one *display form*, which this module makes:

* :func:`text` — for JSON, messages and logs: each undecodable byte as
  ``\\xNN`` (its value, ``NN`` ≥ 80), any other lone surrogate as ``\\uDXXX``;
  everything else is kept exactly (JSON escapes its own control characters).
* :func:`terminal` — for text printed to a terminal: :func:`text`, and also
  every control character (C0 with tab and newline, DEL, C1), the bidi
  embeddings, overrides and isolates, and the line and paragraph separators
  as escapes: ``\\xNN`` below U+0080 (ESC is ``\\x1b``, a newline ``\\x0a``),
  ``\\uXXXX`` above (``\\u202e``).

``\\xNN`` with NN ≥ 80 is therefore always a byte that was not UTF-8, never a
character. The form is for reading, not a way back: a backslash is kept as it
is, so ``caf\\xe9`` may also be a name that really has a backslash in it. A
name shown with such an escape cannot be given back as a source; no JSON
string can spell it.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_TERMINAL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Controls, the line and paragraph separators, bidi embeddings and overrides (U+202A to
U+202E) and isolates (U+2066 to U+2069), lone surrogates."""
_ESCAPED_BYTES = range(0xDC80, 0xDD00)
"""``surrogateescape`` puts byte ``b`` (0x80 to 0xFF) at ``U+DC00 + b``."""


def is_text(value: str) -> bool:
    """Whether ``value`` is valid Unicode text (no lone surrogate), so UTF-8 can carry it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text(value: object) -> str:
    """``str(value)`` (a name, a path) as valid text: undecodable bytes as ``\\xNN``,
    other lone surrogates as ``\\uDXXX``."""
    shown = str(value)
    return shown if is_text(shown) else _SURROGATE.sub(_escape, shown)


def terminal(value: object) -> str:
    """``str(value)`` as a terminal may print it: :func:`text`, and no control character."""
    return _TERMINAL.sub(_escape, str(value))


def shortened(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, a cut one ending in ``…``: how an
    error or message quotes a value that came from outside and may be of any length."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_values(value: Any) -> Any:
    """``value`` with every string in it (keys too, through dicts, lists and tuples) in
    its :func:`text` form: what goes into ``json.dumps``, which would otherwise write a
    lone surrogate that no UTF-8 reader accepts."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {json_values(k): json_values(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_values(item) for item in value]
    return value


def _escape(match: re.Match[str]) -> str:
    point = ord(match.group())
    if point in _ESCAPED_BYTES:
        return f"\\x{point - 0xDC00:02x}"
    return f"\\x{point:02x}" if point < 0x80 else f"\\u{point:04x}"
