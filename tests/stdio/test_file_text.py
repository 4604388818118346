"""Line endings and BOM byte-exact (hardening item 12): untouched lines keep their bytes,
changed lines their ending, new lines the ending of the line they follow; CRLF, LF and a
lone CR each end a line, as for the notation's tools; the agent's text and the checksum
stay those of the documents API."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    BOM,
    dukpy_fixture,
    plan_file,
    root_fixture,
    store_fixture,
)
from werkbaum_core import Engine, checksum
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.text import normalize_newlines
from werkbaum_stdio.file_text import decode, encode_new, encode_update
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.line_match import matching

MIXED = b"[ ] #plan: Plan\r\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)\r\n  - [ ] #c: C (S)\n"
LONE_CR = b"[ ] #plan: Plan\n  - [ ] #a: A (S)\r  - [ ] #a2: A2 (S)\n  - [ ] #b: B (M)\n"
MAC = b"[ ] #plan: Plan\r  - [ ] #a: A (S)\r  - [ ] #b: B (M)\r"


def verb(engine: Engine, store: FileStore, name: str, **args: Any) -> Any:
    base = store.read("plan.werkbaum").base
    return write(engine, store, WriteRequest("plan.werkbaum", base, name, args))


# --- through the write pipeline, with the real engine -----------------------------------------


def test_a_mixed_file_keeps_every_untouched_line_and_each_ending_after_set_status(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root, MIXED)
    verb(dukpy, store, "setStatus", id="b", status="x")
    assert path.read_bytes() == MIXED.replace(b"[ ] #b", b"[x] #b")
    verb(dukpy, store, "setStatus", id="a", status="/")
    assert path.read_bytes() == MIXED.replace(b"[ ] #b", b"[x] #b").replace(b"[ ] #a", b"[/] #a")


def test_a_new_line_takes_the_ending_of_the_line_it_follows(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root, MIXED)
    verb(dukpy, store, "addNode", parent="plan", line="- [ ] #d: D (S)", after="b")
    expected = MIXED.replace(b"(M)\r\n", b"(M)\r\n  - [ ] #d: D (S)\r\n")
    assert path.read_bytes() == expected
    verb(dukpy, store, "addNode", parent="plan", line="- [ ] #e: E (S)")
    assert path.read_bytes() == expected + b"  - [ ] #e: E (S)\n"


def test_a_lone_cr_ends_a_line_for_reads_verbs_and_line_ops_alike(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    """Round 22, F2: the agent was shown a lone CR as part of its line while ``apply_ops``
    counted it as a break, so every index after it edited the line above the one meant."""
    path = plan_file(root, LONE_CR)
    snapshot = store.read("plan.werkbaum")
    assert snapshot.text.split("\n")[2] == "  - [ ] #a2: A2 (S)", "the CR ends line 2"
    assert snapshot.lines == 5
    assert snapshot.base.checksum == checksum(LONE_CR.decode())
    result = verb(dukpy, store, "setStatus", id="b", status="x")
    assert path.read_bytes() == LONE_CR.replace(b"[ ] #b", b"[x] #b")
    assert result.base == store.read("plan.werkbaum").base
    replace = {"op": "replace", "index": 3, "count": 1, "lines": ["  - [/] #b: B (M)"]}
    verb(dukpy, store, "applyOps", ops=[replace])
    assert path.read_bytes() == LONE_CR.replace(b"[ ] #b", b"[/] #b")
    verb(dukpy, store, "applyOps", ops=[{"op": "delete", "index": 2, "count": 1}])
    assert path.read_bytes() == LONE_CR.replace(b"[ ] #b", b"[/] #b").replace(
        b"  - [ ] #a2: A2 (S)\n", b""
    )


@pytest.mark.parametrize("brk", ["\r", "\n", "\r\n"], ids=["lone CR", "LF", "CRLF"])
def test_a_line_break_inside_an_op_line_is_two_lines_everywhere(
    dukpy: Engine, store: FileStore, root: Path, brk: str
) -> None:
    """Round 22, t3 G5: an op line holding a lone CR was one line to the diff and the
    guard but two in the file, and the re-read looked like a co-editor's merged change."""
    path = plan_file(root, b"- A\n- B\n")
    insert = {"op": "insert", "index": 1, "count": 0, "lines": [f"- X{brk}- Y"]}
    result = verb(dukpy, store, "applyOps", ops=[insert])
    assert path.read_bytes() == b"- A\n- X\n- Y\n- B\n"
    assert [op["lines"] for op in result.ops] == [["- X", "- Y"]]
    assert result.diff.split("\n")[-3:] == ["+- X", "+- Y", " - B"]
    assert result.merged is None and result.findings == ()
    assert result.lines == 5 and result.base == store.read("plan.werkbaum").base


def test_a_classic_mac_file_reads_as_its_nodes_and_keeps_its_endings(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root, MAC)
    assert store.read("plan.werkbaum").lines == 4
    verb(dukpy, store, "setStatus", id="b", status="x")
    assert path.read_bytes() == MAC.replace(b"[ ] #b", b"[x] #b")
    insert = {"op": "insert", "index": 2, "count": 0, "lines": ["  - [ ] #n: New (S)"]}
    verb(dukpy, store, "applyOps", ops=[insert])
    expected = MAC.replace(b"[ ] #b", b"[x] #b").replace(b"(S)\r", b"(S)\r  - [ ] #n: New (S)\r")
    assert path.read_bytes() == expected


def test_a_written_text_starting_with_a_bom_does_not_double_it(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root, BOM + MIXED)
    text = "\ufeff" + store.read("plan.werkbaum").text.replace("(S)", "(M)", 1)
    verb(dukpy, store, "write", text=text)
    assert path.read_bytes() == BOM + MIXED.replace(b"(S)", b"(M)", 1)
    plain = plan_file(root, b"[ ] #p: P\n", "plain.werkbaum")
    base = store.read("plain.werkbaum").base
    store.write("plain.werkbaum", base, [], "\ufeff[x] #p: P\n")
    assert plain.read_bytes() == b"[x] #p: P\n", "a file without a BOM does not get one"


# --- the rules, directly -----------------------------------------------------------------------


def test_changed_lines_keep_their_ending_and_a_first_line_takes_the_majority() -> None:
    old = decode(b"a\r\nb\nc\r\nd\r\n")
    assert encode_update("a\nB\nc\nd\n", old) == b"a\r\nB\nc\r\nd\r\n"
    assert encode_update("x\na\nb\nc\nd\n", old) == b"x\r\na\r\nb\nc\r\nd\r\n"
    assert encode_update("a\nb\nc\nd", old) == b"a\r\nb\nc\r\nd", "the last break removed"
    assert encode_update("a\nb\nc\nd\ne", old) == b"a\r\nb\nc\r\nd\r\ne"
    open_end = decode(b"a\r\nb")
    assert encode_update("a\nb\nc\n", open_end) == b"a\r\nb\r\nc\r\n"


def test_an_agents_crlf_and_lone_cr_are_line_breaks() -> None:
    old = decode(b"a\nb\r\n")
    assert encode_update("a\r\nb\r\nc\r\n", old) == b"a\nb\r\nc\r\n"
    assert encode_update("a\nb\nc\rd\n", old) == b"a\nb\r\nc\r\nd\r\n"
    assert encode_update("a\nb\nc\r\r\nd", old) == b"a\nb\r\nc\r\n\r\nd", "CR, then CRLF"


def test_a_created_file_gets_the_text_as_given() -> None:
    assert encode_new("a\r\nb\n") == b"a\r\nb\n"
    assert encode_new("\ufeffa\n") == BOM + b"a\n"


def test_line_matching_finds_moved_and_kept_lines_fast_enough() -> None:
    old = [f"- [ ] #n{k}: Step {k} (S)" for k in range(20_000)]
    changed = [line + "!" if k % 50 == 0 else line for k, line in enumerate(old)]
    pairs = matching(old, changed)
    assert len(pairs) == 20_000 - 400
    assert all(old[o] == changed[n] for n, o in pairs.items())
    moved = old[100:] + old[:100]
    assert len(matching(old, moved)) == 20_000 - 100


# --- properties --------------------------------------------------------------------------------

ENDINGS = st.sampled_from(["\n", "\r\n", "\n", "\r\n", "\r", ""])
CONTENT = st.text(st.sampled_from(["a", "b", " ", "é", "#"]), max_size=6)


@st.composite
def files(draw: st.DrawFn) -> bytes:
    """Plan-like bytes: lines with mixed endings (lone CRs among them), maybe a BOM, maybe
    open at the end."""
    lines = draw(st.lists(st.tuples(CONTENT, ENDINGS), max_size=12))
    body = "".join(content + (ending or "\n") for content, ending in lines[:-1])
    if lines:
        body += lines[-1][0] + lines[-1][1]
    return (BOM if draw(st.booleans()) else b"") + body.encode()


@given(files())
@example(b"a\r\r\nb\n")
@example(b"\r")
@example(BOM + b"\r\n\r")
def test_writing_back_the_text_as_read_or_normalised_keeps_every_byte(data: bytes) -> None:
    old = decode(data)
    assert encode_update(old.text, old) == data
    assert encode_update(normalize_newlines(old.text), old) == data


def raw_lines(data: bytes) -> list[bytes]:
    """A file's lines with their own endings (``\\r\\n``, ``\\n`` or a lone ``\\r``)."""
    return re.findall(rb"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$", data.removeprefix(BOM))


@given(files(), st.integers(0, 50))
@example(b"\n\r\n\r", 0)
@example(b"\n\r\n\r", 1)
@example(b"\n\r\n\r", 2)
@example(b"\n\n\r\r\r", 5)
def test_a_changed_line_leaves_the_bytes_of_every_other_line(data: bytes, pick: int) -> None:
    old = decode(data)
    lines = old.text.split("\n")
    index = pick % len(lines)
    lines[index] = f"- [x] #changed{index}: new"
    stored = encode_update("\n".join(lines), old)
    before, after = raw_lines(data), raw_lines(stored)
    if index == len(before):  # the empty piece after a final break: the file gains a line
        assert after == [*before, lines[index].encode()]
        return
    assert len(after) == len(before)
    for number, (was, now) in enumerate(zip(before, after, strict=True)):
        if number != index:
            assert now == was
    ending = re.search(rb"\r\n$|\n$|\r$", before[index])
    assert after[index] == lines[index].encode() + (ending.group() if ending else b"")
    assert stored.startswith(BOM) == old.bom


@given(files(), st.lists(st.sampled_from(["x", "\n", "\r", "\r\n", "é"]), max_size=20).map("".join))
@example(b"\ra\n", "\n\n")
def test_the_stored_file_always_has_the_checksum_of_the_written_text(
    data: bytes, text: str
) -> None:
    stored = decode(encode_update(text, decode(data)))
    assert checksum(stored.text) == checksum(text)
