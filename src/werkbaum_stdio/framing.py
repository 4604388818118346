"""One line of the stdio wire: a message for the session, or the error it gets instead.

A host that sends a request waits for its answer. The SDK's message parser
refuses some lines that are valid JSON (a string with a lone UTF-16
surrogate such as ``"\\ud800"``, which ``JSON.stringify`` emits; nesting
deeper than its parser goes) and reads others as a notification, which gets
no answer (a request whose ``id`` is ``true`` or ``1.5``); a line that is not
a message at all would reach the session as an exception, which it drops.
Either way the host would wait forever. So every line the SDK cannot take
is looked at again here, and anything that is a request gets the JSON-RPC
2.0 error for it:

==========  =====================================================================
``-32700``  parse error: not UTF-8, not JSON (``id`` null unless it can be read)
``-32600``  invalid request: not one message object, ``jsonrpc`` not ``"2.0"``,
            no or a non-string ``method``, an ``id`` that is not a string or an
            integer (``id`` null), nested deeper than the parser reads, a line
            longer than :data:`MAX_LINE_BYTES`
``-32602``  invalid params: ``params`` not an object (MCP has no positional
            params), a string in them with a lone surrogate
==========  =====================================================================

A notification or a response that is malformed cannot be answered; the
transport logs it instead. This is the slow path: a line the SDK parses is
passed on as parsed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs
import mcp.types as types
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter, ValidationError

from werkbaum_core.text import MAX_TEXT_CHARS

MAX_LINE_BYTES = MAX_TEXT_CHARS * 12 + (1 << 20)
"""Longest line read (~25 MB): a request carrying a plan of the maximum size still fits
when every character is written as a ``\\ud83d\\ude00``-style escape pair (12 bytes);
a longer line is refused unread, so a host cannot make the server hold any amount."""
ID_PREFIX_BYTES = 1 << 16
"""How much of a refused line is searched for its ``id`` (hosts write it near the start)."""
PARSER_DEPTH = 200
"""About how deep the SDK's JSON parser nests (pydantic-core's recursion limit)."""


@attrs.frozen
class Refusal:
    """A line that does not reach the session: the error to answer it with, if any."""

    code: int
    message: str
    request_id: types.RequestId | None = None
    answerable: bool = True
    """False for a notification or a response: nobody waits for an answer."""

    def answer(self) -> bytes:
        return error_line(self.code, self.message, self.request_id)


UNENCODABLE = "internal error: the answer could not be encoded as JSON (it is nested too deeply)"
"""The -32603 message for an answer deeper than pydantic's serialiser goes (~255 levels)."""


def too_deep(exc: Exception) -> bool:
    """Whether ``exc`` is pydantic's "Maximum serialization depth exceeded"."""
    return "depth exceeded" in str(exc)


def error_line(code: int, message: str, request_id: types.RequestId | None) -> bytes:
    """A JSON-RPC error as one wire line (the stdio transport's own answers)."""
    error = types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )
    return _ERROR.dump_json(error, by_alias=True, exclude_unset=True) + b"\n"


UTF8_BOM = b"\xef\xbb\xbf"
_ERROR = TypeAdapter(types.JSONRPCError)
_MESSAGE = types.jsonrpc_message_adapter


def decode_line(line: bytes) -> SessionMessage | Refusal | None:
    """The message on ``line``, or why there is none; ``None`` for a blank line."""
    if not line.strip():
        return None
    # RFC 8259 §8.1 lets a parser ignore a byte order mark; some Windows pipes send one.
    line = line.removeprefix(UTF8_BOM)
    try:
        message = _MESSAGE.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _explain(line, exc)
    if isinstance(message, types.JSONRPCNotification) and b'"id"' in line:
        # An id the SDK's model does not take (true, 1.5, null) is dropped with the
        # notification it then looks like: a request nobody would answer.
        return _notification_or_bad_id(line, message)
    return SessionMessage(message)


def refuse_long_line(prefix: bytes) -> Refusal:
    """The answer to a line longer than :data:`MAX_LINE_BYTES` (only ``prefix`` was kept)."""
    return Refusal(
        types.INVALID_REQUEST,
        f"Invalid Request: the line is longer than {MAX_LINE_BYTES} bytes, the limit of "
        "this server",
        salvage_id(prefix.decode("utf-8", "surrogateescape")),
    )


def _notification_or_bad_id(
    line: bytes, message: types.JSONRPCNotification
) -> SessionMessage | Refusal:
    raw = json.loads(line)
    if isinstance(raw, dict) and "id" in raw:
        return Refusal(types.INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    return SessionMessage(message)


def _explain(line: bytes, parse_error: ValidationError) -> Refusal:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(
            types.PARSE_ERROR,
            f"Parse error: the line is not UTF-8 (byte 0x{line[exc.start]:02x} at offset "
            f"{exc.start})",
            salvage_id(line.decode("utf-8", "surrogateescape")),
        )
    try:
        raw = json.loads(text)
    except RecursionError:
        return _too_deep(salvage_id(text))
    except ValueError as exc:
        detail = (
            f"{exc.msg} at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else exc
        )
        return Refusal(types.PARSE_ERROR, f"Parse error: the line is not JSON ({detail})")
    return _check(raw, parse_error)


def _check(raw: Any, parse_error: ValidationError) -> Refusal:
    """Why the parsed ``raw`` is not a message the session can take."""
    if not isinstance(raw, dict):
        kind = "an array (batches are not part of MCP)" if isinstance(raw, list) else "a scalar"
        return Refusal(
            types.INVALID_REQUEST, f"Invalid Request: one message object per line, not {kind}"
        )
    if "id" in raw and not _is_id(raw["id"]):
        return Refusal(types.INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    request_id = raw.get("id")
    # A response (result or error) and a notification get no answer, whatever is wrong.
    expects_answer = "id" in raw and not ({"result", "error"} & raw.keys())

    def refuse(code: int, message: str) -> Refusal:
        return Refusal(code, message, request_id, answerable=expects_answer)

    if raw.get("jsonrpc") != "2.0":
        return refuse(types.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "method" in raw and not isinstance(raw["method"], str):
        return refuse(types.INVALID_REQUEST, "Invalid Request: method must be a string")
    if expects_answer and "method" not in raw:
        return refuse(types.INVALID_REQUEST, "Invalid Request: no method")
    if "params" in raw and not isinstance(raw["params"], dict):
        return refuse(
            types.INVALID_PARAMS,
            "Invalid params: params must be an object (MCP passes parameters by name)",
        )
    if _has_lone_surrogate(raw.get("params")):
        return refuse(
            types.INVALID_PARAMS,
            "Invalid params: a string contains a lone UTF-16 surrogate (such as \\ud800), "
            "which is not Unicode text",
        )
    if _has_lone_surrogate(raw):
        return refuse(types.INVALID_REQUEST, "Invalid Request: a lone UTF-16 surrogate")
    if "recursion limit" in str(parse_error):
        return _too_deep(request_id, answerable=expects_answer)
    first = parse_error.errors()[0] if parse_error.errors() else {"msg": "malformed"}
    where = ".".join(str(part) for part in first.get("loc", ())[1:])
    return refuse(types.INVALID_REQUEST, f"Invalid Request: {where or 'message'}: {first['msg']}")


def _too_deep(request_id: types.RequestId | None, *, answerable: bool = True) -> Refusal:
    return Refusal(
        types.INVALID_REQUEST,
        f"Invalid Request: nested more than about {PARSER_DEPTH} levels deep, deeper than "
        "this server reads",
        request_id,
        answerable=answerable,
    )


def _is_id(value: Any) -> bool:
    """MCP request ids: strings and integers (JSON-RPC's null and fractions are not)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _has_lone_surrogate(value: Any) -> bool:
    if value is None:
        return False
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def salvage_id(text: str) -> types.RequestId | None:
    """The top-level ``id`` of a message that cannot be parsed whole, if it can be read.

    Scans at most :data:`ID_PREFIX_BYTES` characters token by token, skipping
    everything nested; only a string or integer ``id`` member of the outermost
    object counts, and not a string with undecodable bytes in it (``text`` comes
    from ``surrogateescape`` decoding) or with a lone surrogate.
    """
    depth = 0
    expect_key = False
    key: str | None = None
    after_colon = False
    for match in _TOKEN.finditer(text, 0, ID_PREFIX_BYTES):
        token = match.group()
        if depth == 1 and after_colon:
            after_colon = False
            if key == "id" and token not in ("{", "["):
                try:
                    value = json.loads(token)
                except ValueError:
                    return None
                return value if _is_id(value) and not _has_lone_surrogate(value) else None
        if token in ("{", "["):
            depth += 1
            expect_key = depth == 1 and token == "{"
        elif token in ("}", "]"):
            depth -= 1
            if depth <= 0:
                return None
        elif depth == 1 and token == ",":
            expect_key = True
        elif depth == 1 and token == ":":
            after_colon = True
        elif depth == 1 and expect_key and token.startswith('"'):
            try:
                key = json.loads(token)
            except ValueError:
                key = None
            expect_key = False
    return None
