"""The JSON-RPC envelope of a POST body, checked before the SDK sees it.

The SDK's 2026-07-28 path answers a body that is not one well-formed message
with ``-32600``; its handshake-era (2025-11-25) path did not (round 21): a
request whose ``id`` is a float, a boolean, an object or ``null`` was taken
for a notification (``202``, no answer at all), and ``params`` as an array,
``jsonrpc`` other than ``"2.0"``, no or a numeric ``method``, a batch or a
bare string got ``-32602`` with pydantic's validation dump as the message.
So :class:`~werkbaum_http.limits.McpGate`, which holds the whole body anyway,
checks the envelope here for both eras alike, and answers what is not one
message with ``-32600`` and a one-line reason (``params`` that is not an
object: ``-32602``, as on stdio).

Only the envelope is checked: a body that is not JSON is left to the SDK
(``-32700``), and so is everything inside ``params``.
"""

from __future__ import annotations

import json
from typing import Any

INVALID_REQUEST = -32600
"""JSON-RPC 2.0: the JSON sent is not a valid request object."""
INVALID_PARAMS = -32602
"""JSON-RPC 2.0: a valid request whose params are not what the method takes (an MCP
method takes an object): as the stdio server answers it."""

RequestId = str | int


def envelope_error(body: bytes) -> bytes | None:
    """The ``-32600`` answer for ``body``, or None when it is one message (or not JSON)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK's parse error
    if not isinstance(message, dict):
        return _answer(None, "the body must be one JSON-RPC message object (no batches)")
    request_id = message.get("id")
    known = request_id if _is_id(request_id) else None
    problem = _problem(message)
    if problem is not None:
        return _answer(known, problem)
    if not isinstance(message.get("params", {}), dict):
        return _answer(known, "params must be an object", INVALID_PARAMS)
    return None


def _problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and not _is_id(message["id"]) and "method" in message:
        return "id must be a string or an integer"
    if "method" not in message:
        return _response_problem(message)
    if not isinstance(message["method"], str):
        return "method must be a string"
    return None


def _response_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with a body without ``method``: it can only be a response."""
    if ("result" in message) == ("error" in message):
        return "a request needs a method (a response: result or error)"
    error = message.get("error")
    if "error" in message and not (
        isinstance(error, dict)
        and _is_int(error.get("code"))
        and isinstance(error.get("message"), str)
    ):
        return "error must be an object with an integer code and a string message"
    if not (_is_id(message.get("id")) or ("error" in message and message.get("id") is None)):
        return "id must be a string or an integer"
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_id(value: object) -> bool:
    return isinstance(value, str) or _is_int(value)


def _answer(request_id: RequestId | None, problem: str, code: int = INVALID_REQUEST) -> bytes:
    said = "Invalid Request" if code == INVALID_REQUEST else "Invalid params"
    error = {"code": code, "message": f"{said}: {problem}"}
    answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
    return json.dumps(answer, separators=(",", ":")).encode()
