"""The display form of foreign names and text (``werkbaum_core.display``): always valid
UTF-8, exact where nothing needed escaping, and on a terminal free of every control."""

from __future__ import annotations

import json
import os
import re

from hypothesis import given
from hypothesis import strategies as st

from werkbaum_core import ForbiddenSource, display

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ANY_STRING = st.text(st.characters(codec=None, exclude_categories=()))
"""Every code point, lone surrogates included."""
NAME_BYTES = st.binary(max_size=40)


def test_the_forms_of_bytes_controls_and_surrogates() -> None:
    latin = os.fsdecode(b"caf\xe9/\xff")
    assert display.text(latin) == "caf\\xe9/\\xff"
    assert display.terminal(latin) == "caf\\xe9/\\xff"
    assert display.text("lone \ud800") == "lone \\ud800"
    label = "a\x1b]0;t\x07\tb\nc\x7f\x9b\u202e\u2066\u2028 é 漢 🙂"
    assert display.text(label) == label  # valid text is kept exactly
    assert display.terminal(label) == (
        "a\\x1b]0;t\\x07\\x09b\\x0ac\\x7f\\u009b\\u202e\\u2066\\u2028 é 漢 🙂"
    )
    # \xNN at or above 80 is a byte that was not UTF-8; the character U+0080 is \u0080.
    assert display.terminal(os.fsdecode(b"\x9b") + "\x9b") == "\\x9b\\u009b"
    assert display.is_text(label) and not display.is_text(latin)


def test_json_values_reach_every_string_and_key() -> None:
    bad = os.fsdecode(b"\xe9")
    body = {"message": bad, bad: [bad, (1, bad)], "n": 3, "none": None}
    assert display.json_values(body) == {
        "message": "\\xe9",
        "\\xe9": ["\\xe9", [1, "\\xe9"]],
        "n": 3,
        "none": None,
    }


def test_an_error_naming_such_a_path_is_always_encodable() -> None:
    root = os.fsdecode(b"/tmp/caf\xe9")
    error = ForbiddenSource(f"x is outside {root}", roots=[root])
    assert error.message == str(error) == "x is outside /tmp/caf\\xe9"
    body = json.dumps(error.to_json(), ensure_ascii=False).encode("utf-8")
    assert json.loads(body)["error"]["roots"] == ["/tmp/caf\\xe9"]


@given(ANY_STRING)
def test_any_string_becomes_valid_text_and_terminal_safe(value: str) -> None:
    shown = display.text(value)
    shown.encode("utf-8")
    assert (shown == value) == display.is_text(value)
    on_terminal = display.terminal(value)
    assert not UNSAFE.search(on_terminal)
    assert display.terminal(on_terminal) == on_terminal  # once is enough


@given(NAME_BYTES)
def test_a_file_names_bytes_are_spelled_out_one_by_one(name: bytes) -> None:
    shown = display.text(os.fsdecode(name))
    if b"\\" not in name:  # a backslash is kept as it is, so only then is it reversible
        undone = re.sub(r"\\x([89a-f][0-9a-f])", lambda m: chr(0xDC00 + int(m[1], 16)), shown)
        assert os.fsencode(undone) == name
