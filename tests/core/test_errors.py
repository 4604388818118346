"""The error codes agents can receive are documented, in the README and in errors.py."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from werkbaum_core import errors
from werkbaum_core.text import MAX_TEXT_CHARS, check_size

TOOL_CODES = {
    cls.code
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, errors.WerkbaumError)
} - {"error", "module_set"}
"""Every code a tool result can carry (``module_set`` only stops a start-up)."""


def test_the_readme_lists_every_tool_error_code() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"codes: ((?:`[a-z_]+`,?\s*)+)", readme)
    assert listed, "README has no list of tool error codes"
    assert set(re.findall(r"`([a-z_]+)`", listed.group(1))) == TOOL_CODES


def test_the_errors_module_says_what_each_code_asks_of_the_agent() -> None:
    table = errors.__doc__ or ""
    for code in TOOL_CODES:
        assert f"``{code}``" in table, code


def test_a_size_refusal_names_what_its_size_and_the_limit_in_one_wording() -> None:
    with pytest.raises(errors.TooLarge) as refused:
        check_size(MAX_TEXT_CHARS + 1, "the new text")
    assert refused.value.message == (
        "the new text has 2,000,001 characters; the limit is 2,000,000 characters"
    )
    assert refused.value.to_json()["error"] == {
        "code": "too_large",
        "message": refused.value.message,
        "limit": MAX_TEXT_CHARS,
        "size": MAX_TEXT_CHARS + 1,
    }
    cut_off = errors.TooLarge.over("the answer", 10, unit="lines", note="read to the bound")
    assert cut_off.message == "the answer is too large; the limit is 10 lines (read to the bound)"
    assert cut_off.details == {"limit": 10}
