"""The error codes agents can receive are documented, in the README and in errors.py."""

from __future__ import annotations

import re

from tests.conftest import REPO
from werkbaum_core import errors

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
