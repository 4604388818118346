"""What the stdio transport makes of one line (``werkbaum_stdio.framing``), without a process.

The raw pipe tests (``test_answers.py``) show the same answers on a real server.
"""

from __future__ import annotations

import json

import mcp.types as types
import pytest
from mcp.shared.message import SessionMessage

from werkbaum_stdio.framing import (
    ID_PREFIX_BYTES,
    MAX_LINE_BYTES,
    Refusal,
    decode_line,
    refuse_long_line,
    salvage_id,
)

PING = b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}\n'


def refused(line: bytes) -> Refusal:
    item = decode_line(line)
    assert isinstance(item, Refusal), item
    return item


def test_a_valid_line_is_passed_on_as_parsed() -> None:
    item = decode_line(PING)
    assert isinstance(item, SessionMessage)
    assert isinstance(item.message, types.JSONRPCRequest) and item.message.id == 7


def test_blank_lines_are_skipped() -> None:
    assert decode_line(b"\n") is None
    assert decode_line(b"  \r\n") is None


@pytest.mark.parametrize(
    ("line", "code", "request_id", "says"),
    [
        (b"not json\n", types.PARSE_ERROR, None, "not JSON"),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "ping"\n', types.PARSE_ERROR, None, "not JSON"),
        (b'\xff{"jsonrpc": "2.0", "id": 4, "method": "ping"}\n', types.PARSE_ERROR, 4, "UTF-8"),
        (
            b'{"jsonrpc": "2.0", "id": "a\xc3", "method": "ping"}\n',
            types.PARSE_ERROR,
            None,
            "UTF-8",
        ),
        (b"[]\n", types.INVALID_REQUEST, None, "batches"),
        (b"[" + PING.strip() + b"]\n", types.INVALID_REQUEST, None, "batches"),
        (b"42\n", types.INVALID_REQUEST, None, "one message object"),
        (b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}\n', types.INVALID_REQUEST, 3, "2.0"),
        (b'{"id": 3, "method": "ping"}\n', types.INVALID_REQUEST, 3, "2.0"),
        (b'{"jsonrpc": "2.0", "id": 3, "method": 5}\n', types.INVALID_REQUEST, 3, "method"),
        (b'{"jsonrpc": "2.0", "id": 3}\n', types.INVALID_REQUEST, 3, "no method"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}\n', types.INVALID_REQUEST, None, "id"),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}\n', types.INVALID_REQUEST, None, "id"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\n', types.INVALID_REQUEST, None, "id"),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}\n', types.INVALID_REQUEST, None, "id"),
        (
            b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": [1]}\n',
            types.INVALID_PARAMS,
            2,
            "params must be an object",
        ),
        (
            b'{"jsonrpc": "2.0", "id": "s", "method": "x", "params": {"a": "\\ud800"}}\n',
            types.INVALID_PARAMS,
            "s",
            "lone UTF-16 surrogate",
        ),
        (
            b'{"jsonrpc": "2.0", "id": 9, "method": "x", "params": {"a": '
            + b"[" * 300
            + b"]" * 300
            + b"}}\n",
            types.INVALID_REQUEST,
            9,
            "nested more than",
        ),
        (
            b'{"jsonrpc": "2.0", "id": 10, "method": "x", "params": {"a": '
            + b"[" * 5000
            + b"]" * 5000
            + b"}}\n",
            types.INVALID_REQUEST,
            10,
            "nested more than",
        ),
    ],
)
def test_every_request_the_sdk_cannot_take_gets_the_json_rpc_error_for_it(
    line: bytes, code: int, request_id: types.RequestId | None, says: str
) -> None:
    refusal = refused(line)
    assert refusal.answerable
    assert (refusal.code, refusal.request_id) == (code, request_id)
    assert says in refusal.message
    answer = json.loads(refusal.answer())
    assert answer == {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": refusal.message},
    }


def test_a_valid_surrogate_pair_is_text_and_passes() -> None:
    line = b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": "\\ud83d\\ude00"}}\n'
    item = decode_line(line)
    assert isinstance(item, SessionMessage)
    assert isinstance(item.message, types.JSONRPCRequest)
    assert item.message.params == {"a": "\N{GRINNING FACE}"}


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}\n',
        b'{"jsonrpc": "1.0", "method": "notifications/x"}\n',
        b'{"jsonrpc": "2.0", "id": 5, "result": {"a": "\\udc00"}}\n',
        b'{"jsonrpc": "2.0", "id": 5, "error": "no object"}\n',
    ],
    ids=["notification-params", "notification-version", "response-surrogate", "error-shape"],
)
def test_notifications_and_responses_are_never_answered(line: bytes) -> None:
    assert not refused(line).answerable


def test_an_overlong_line_is_refused_with_the_id_from_its_start() -> None:
    prefix = b'{"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"text": "xxxx'
    refusal = refuse_long_line(prefix)
    assert (refusal.code, refusal.request_id) == (types.INVALID_REQUEST, "big")
    assert str(MAX_LINE_BYTES) in refusal.message


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"jsonrpc": "2.0", "id": 12, "method": "x"', 12),
        ('{"method": "x", "params": {"id": 99, "deep": [[[{"id": 98}]]]}, "id": "top"', "top"),
        ('{"params": {"id": 99}, "method": "x"', None),
        ('{"text": "a \\"id\\": 5, b", "id": -3', -3),
        ('{"id": true', None),
        ('{"id": 1.5', None),
        ('{"id": {"x": 1}', None),
        ('[{"id": 1}]', None),
        ('{"a": 1} {"id": 2}', None),
        ("", None),
    ],
)
def test_salvage_id_reads_only_the_top_level_string_or_integer_id(
    text: str, found: types.RequestId | None
) -> None:
    assert salvage_id(text) == found


def test_salvage_id_looks_only_at_the_start() -> None:
    text = '{"padding": "' + "x" * ID_PREFIX_BYTES + '", "id": 1}'
    assert salvage_id(text) is None
