"""What write tools accept (issue 14, items 3 and 7; issue 13, item 7): ids in either
spelling with suggestions for unknown ones, a whole block in one add_node, and the text
limit checked before the engine analyses a result — dry runs included — on every executor."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import REFERENCE_PLAN
from tests.core.one_store import OneStore
from werkbaum_core import Engine, InvalidArgument, NotFound, TooLarge, checksum
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Services
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base, MemoryStore
from werkbaum_core.text import MAX_TEXT_CHARS

PLAN = """[ ] #shop: Shop
  - [ ] #shop.live: Go live (M)
    - [ ] #shop.live.dns: DNS (XS)
  - [ ] #shop.cart: Cart (S)
---
#shop.live
  Launch day.
"""


def run(engine: Engine, verb: str, args: dict[str, Any], text: str = PLAN, **flags: Any) -> Any:
    store = MemoryStore({"p": text})
    result = write(engine, store, WriteRequest("p", Base(checksum(text)), verb, args, **flags))
    return store, result.to_json()


# ------------------------------------------------------------------ ids


@pytest.mark.parametrize(
    ("verb", "args"),
    [
        ("setStatus", {"id": "#shop.cart", "status": "x"}),
        ("setSize", {"id": "#shop.cart", "size": "M"}),
        ("addNode", {"parent": "#shop", "line": "- [ ] #shop.pay: Pay (S)", "after": "#shop.live"}),
        ("moveNode", {"id": "#shop.cart", "parent": "#shop.live"}),
        ("removeNode", {"id": "#shop.cart", "discard": True}),
    ],
)
def test_every_id_parameter_takes_both_spellings(
    engine: Engine, verb: str, args: dict[str, Any]
) -> None:
    bare = {k: v.removeprefix("#") if isinstance(v, str) else v for k, v in args.items()}
    assert run(engine, verb, args)[0].text("p") == run(engine, verb, bare)[0].text("p")


@pytest.mark.parametrize(
    ("args", "what", "meant"),
    [
        ({"id": "#shop.liv", "status": "x"}, "", ["shop.live"]),
        ({"id": "cart", "status": "x"}, "", ["shop.cart"]),
        ({"id": "nothing.like.it", "status": "x"}, "", None),
    ],
)
def test_an_unknown_id_suggests_ids(
    engine: Engine, args: dict[str, Any], what: str, meant: list[str] | None
) -> None:
    with pytest.raises(NotFound) as info:
        run(engine, "setStatus", args)
    body = info.value.to_json()["error"]
    assert body["id"] == args["id"].removeprefix("#")
    assert body.get("didYouMean") == meant


def test_a_long_unknown_ref_costs_little_and_is_quoted_short(engine: Engine) -> None:
    """Round 22, F2: every verb's node ref goes through the same bounded search."""
    long_id = "shop.live" + "x" * 3000
    text = PLAN + f"- [ ] #{long_id}y: Long\n"
    with pytest.raises(NotFound) as info:
        run(engine, "setStatus", {"id": long_id, "status": "x"}, text=text)
    assert info.value.message == f"no node with id #{long_id[:39]}…"
    assert "didYouMean" not in info.value.details


def test_an_unknown_parent_or_after_is_named(engine: Engine) -> None:
    with pytest.raises(NotFound) as info:
        run(engine, "addNode", {"parent": "shop.lve", "line": "- [ ] X"})
    assert info.value.message == "no node with id #shop.lve (parent)"
    assert info.value.details["didYouMean"] == ["shop.live"]
    with pytest.raises(NotFound, match=r"#shop\.crt \(after\)"):
        run(engine, "moveNode", {"id": "shop.live", "parent": "shop", "after": "#shop.crt"})


# ------------------------------------------------------------------ a block in one call


def test_add_node_takes_a_block_of_children(engine: Engine) -> None:
    lines = [
        "- [ ] #shop.pay: Payment (S)",
        "  - [ ] #shop.pay.card: Cards (XS)",
        '  " Visa and Mastercard first.',
        "- [ ] #shop.mail: Mails (S) @ben",
    ]
    store, result = run(engine, "addNode", {"parent": "shop", "lines": lines})
    new = store.text("p").split("\n")
    assert new[4:8] == [
        "  - [ ] #shop.pay: Payment (S)",
        "    - [ ] #shop.pay.card: Cards (XS)",
        '    " Visa and Mastercard first.',
        "  - [ ] #shop.mail: Mails (S) @ben",
    ]
    assert new[:4] + new[8:] == PLAN.split("\n")  # every other line untouched
    assert [op["op"] for op in result["ops"]] == ["insert"]
    assert result["warnings"]["added"] == []


def test_a_block_keeps_its_relative_indentation(engine: Engine) -> None:
    lines = ["    - [ ] #shop.live.ssl: TLS (XS)", "      - [ ] #shop.live.ssl.ca: CA (XS)"]
    store, _ = run(engine, "addNode", {"parent": "shop.live", "lines": lines})
    assert store.text("p").split("\n")[3:5] == [
        "    - [ ] #shop.live.ssl: TLS (XS)",
        "      - [ ] #shop.live.ssl.ca: CA (XS)",
    ]


def test_a_block_dry_run_then_write(engine: Engine) -> None:
    args = {"parent": "shop.cart", "lines": ["- [ ] #c.a: A (XS)", "- [ ] #c.b: B (XS)"]}
    store, preview = run(engine, "addNode", args, dry_run=True)
    assert preview["dryRun"] is True and store.writes == 0
    store, done = run(engine, "addNode", args)
    assert done["diff"] == preview["diff"] and store.writes == 1


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "non-empty"),
        (['" just a description'], "not a node line"),
        (["- [ ] A", ""], "blank"),
        (["- [ ] A", "  %% a comment"], "blank"),
        (["- [ ] A", "---"], "separator"),
        (["- [ ] A", "  - [ ] B \\"], "continuation"),
        (["- [ ] A\n- [ ] B"], "single line"),
    ],
)
def test_a_bad_block_is_refused(engine: Engine, lines: list[str], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        run(engine, "addNode", {"parent": "shop", "lines": lines})


def tool(name: str) -> Any:
    return next(t for t in CATALOGUE if t.name == name)


def test_add_node_wants_exactly_one_of_line_and_lines(engine: Engine) -> None:
    store = MemoryStore({"p": PLAN})
    services = Services(engine=engine, sources=OneStore(store))
    base = {"checksum": checksum(PLAN)}
    for extra in ({}, {"line": "- [ ] X", "lines": ["- [ ] X"]}):
        args = {"source": "p", "base": base, "parent": "shop", **extra}
        with pytest.raises(InvalidArgument, match="exactly one of line or lines"):
            tool("werkbaum_add_node").call(services, args, Caller())
    assert store.writes == 0


# ------------------------------------------------------------------ one limit, one code


def test_a_dry_run_over_the_limit_is_too_large(engine: Engine) -> None:
    big = "- [ ] #big: " + "x" * (MAX_TEXT_CHARS - 20)
    lines = ["- [ ] #more: " + "y" * 100]
    for dry in (True, False):
        store = MemoryStore({"p": big})
        request = WriteRequest("p", Base(checksum(big)), "addNode", {"lines": lines}, dry_run=dry)
        with pytest.raises(TooLarge) as info:
            write(engine, store, request)
        assert info.value.details["limit"] == MAX_TEXT_CHARS
        assert info.value.details["size"] > MAX_TEXT_CHARS
        assert store.writes == 0


def test_ops_over_the_limit_are_too_large_before_the_engine(engine: Engine) -> None:
    ops = [{"op": "insert", "index": 0, "lines": ["z" * 1_000_000]}] * 3
    with pytest.raises(TooLarge, match="the limit is 2,000,000"):
        run(engine, "applyOps", {"ops": ops}, dry_run=True)


def test_the_limit_counts_characters_not_utf16_units(engine: Engine) -> None:
    """An astral character is one character, as Python and the backend count them; the
    facade checks the limit it is given before it analyses the new text."""
    text = "- [ ] #e: " + "\N{GRINNING FACE}" * 10
    payload = {"text": text, "verb": "setSize", "args": {"id": "e", "size": "S"}}
    fits = engine.call("edit", {**payload, "limit": len(text) + 4})
    assert fits["text"].endswith(" (S)")
    refused = engine.call("edit", {**payload, "limit": len(text) + 3})
    assert refused["error"]["code"] == "too_large"
    assert refused["error"]["size"] == len(text) + 4


def test_inline_inspect_text_over_the_limit_is_too_large(engine: Engine) -> None:
    services = Services(engine=engine, sources=OneStore(MemoryStore()))
    with pytest.raises(TooLarge):
        tool("werkbaum_inspect").call(services, {"text": "x" * (MAX_TEXT_CHARS + 1)}, Caller())
    schema = tool("werkbaum_inspect").input_schema["properties"]["text"]
    assert "maxLength" not in schema  # the schema would answer invalid_argument instead
    assert "maxLength" not in tool("werkbaum_write").input_schema["properties"]["text"]


def test_a_one_line_block_is_exactly_add_node_line(engine: Engine) -> None:
    """On every parent (and root level) of the reference plan, both ways give the same text."""
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    ids = [n.id for n in engine.analyze(text, include=["tree"]).nodes() if n.id][::7]
    line = "+ [?] #new.one: Something new (XS)"
    for parent in [None, *ids]:
        one = engine.transform("edit", "addNodeLine", text, parent, line, None)
        block = engine.transform("edit", "addNodeBlock", text, parent, [line], None)
        assert block == one, parent
