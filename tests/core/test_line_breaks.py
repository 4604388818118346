"""An inline text is analysed with the line breaks every store reads (round 23, F7).

Files and documents read CRLF and a lone CR as line breaks (notation §1: tools
normalise them to LF), and the checksum hashes the normalised text; an inline
``text`` was analysed as given, so ``"Plan\\r  - A\\r  | B\\r"`` was one node without
warnings while the same bytes as a file had three nodes and a mixedGate error.
"""

from __future__ import annotations

import pytest

from werkbaum_core import Engine, checksum

LF = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  | [x] #b: B (M)\n"


@pytest.mark.parametrize("brk", ["\r", "\r\n"], ids=["lone CR", "CRLF"])
def test_an_inline_text_reads_its_breaks_as_a_file_does(engine: Engine, brk: str) -> None:
    text = LF.replace("\n", brk)
    assert checksum(text) == checksum(LF)
    assert engine.analysis_text(text) == engine.analysis_text(LF)
    analysis = engine.analyze(text)
    assert [w.type for w in analysis.warnings or ()] == ["mixedGate"]
    assert analysis.tree is not None and len(analysis.tree[0].children or ()) == 2


def test_the_checks_columns_count_on_the_normalised_lines(engine: Engine) -> None:
    # The command line's check asks for columns; they are those of the LF text.
    text = LF.replace("\n", "\r")
    assert engine.analyze_json(text, include=["warnings"]) == engine.analyze_json(
        LF, include=["warnings"]
    )
    lf = engine.call("analyze", {"text": LF, "include": ["warnings"], "columns": True})
    cr = engine.call("analyze", {"text": text, "include": ["warnings"], "columns": True})
    assert cr == lf
