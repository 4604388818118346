"""Random tool calls for the robustness tests of both servers
(``tests/stdio/test_random_calls.py``, ``tests/http/test_random_calls.py``).

Calls are drawn from the catalogue's own input schemas: ids, sources, status
codes, node lines and plan texts from pools that hit the notation's corners,
mixed with arbitrary text. An :class:`Agent` makes them one after the other on a
server it talks to through a :class:`Talk`, keeps the base it last got for each
source (and mostly writes with it, as an agent would, so that writes go through
and meet the guard rails, not only conflicts), and checks every answer: a tool
error only with a code the README documents (never ``engine_error``), a write
without ``allowWarnings`` adds no structural warning, and none without
``allowProd`` leaves more nodes ``[^]`` than before (counted by
``werkbaum_inspect`` before and after each write). :func:`with_a_human` plays the calls on
a shared document that a human edits between them, and checks that every write's
new base is what the backend holds and that no write loses a line its writer had
not seen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from hypothesis import event
from hypothesis import strategies as st

from tests.backend.human import Human
from tests.conftest import FIXTURES
from tests.core.test_errors import TOOL_CODES
from werkbaum_core import checksum
from werkbaum_core.rules.catalogue import catalogue

PLAN = (
    '- [~] #root: Root (L) @ann\n  - [x] #a: A (S)\n    " notes on A\n'
    "  - [ ] #b: B (M) :#a\n  - [?] #c: C\n    | [ ] #c.one: One (XS)\n"
    "    | [/] #c.two: Two (S)\n"
)
OUTSIDE = "- [ ] #secret: Not for agents\n"
DOCUMENTED = TOOL_CODES - {"engine_error", "engine_timeout"}
"""Tool error codes a random call may get: README's list without the engine's own
failures, which would be a bug here."""

SOURCES = st.sampled_from(["plan.werkbaum", "big.werkbaum"]) | st.sampled_from(
    [
        "new.werkbaum",
        "sub/new.werkbaum",
        "missing/new.werkbaum",
        "../outside/secret.werkbaum",
        "notes.txt",
        "werkbaum://guide",
        "werkbaum://file/plan.werkbaum",
    ]
)
"""Half the calls name one of the two plans, the others every kind of odd source."""
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
"""Arbitrary text without lone surrogates (those are refused as JSON-RPC errors,
tests/stdio/test_answers.py)."""
IDS = (
    st.sampled_from(["root", "#a", "b", "#c.one", "c.two", "wb", "#be.docs", "not.size"])
    | st.sampled_from(["L1", "L4", "#", "##a", "a b", "#nope"])
    | TEXT
)
LINES = (
    st.sampled_from(
        [
            "- [ ] #n: New (S)",
            "[x] Done",
            "- [ ] #a: Taken id",
            "| [~] Or child",
            "= [ ] Exactly one",
            "  - [ ] Indented",
            "- [z] Odd box",
            "- [^] In production",
            '" a note',
            "%% comment",
        ]
    )
    | TEXT
)
PLANS = st.sampled_from(
    [
        PLAN,
        PLAN.replace("  - [ ] #b", "  | [ ] #b"),  # a mixed gate
        PLAN.replace("[x] #a", "[^] #a"),  # a node put in production
        PLAN + "- [^] #p: Prod\n",
        "",
        "- A\n",
    ]
) | st.builds("\n".join, st.lists(LINES, max_size=6))
BY_NAME = {"source": SOURCES, "id": IDS, "parent": IDS, "after": IDS, "line": LINES}
BY_NAME |= {"text": PLANS, "find": TEXT.filter(bool), "cursor": TEXT}


def values(schema: Mapping[str, Any], name: str, bases: st.SearchStrategy[Any]) -> Any:
    """A strategy for a value of ``schema`` (the subset of JSON Schema the catalogue uses)."""
    if name == "base":
        return bases
    if "anyOf" in schema:
        return st.one_of([values(s, name, bases) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: values(s, k, bases) for k, s in properties.items() if k in required},
            optional={k: values(s, k, bases) for k, s in properties.items() if k not in required},
        )
    if kind == "array":
        items = values(schema.get("items", {}), name, bases)
        return st.lists(items, max_size=4, unique=bool(schema.get("uniqueItems")))
    if kind == "integer":
        return st.integers(0, 12)
    if kind == "boolean":  # a guard rail's flag mostly off, so that the rail is met
        return st.sampled_from([False, False, True]) if name.startswith("allow") else st.booleans()
    if kind == "null":
        return st.none()
    return BY_NAME.get(name, TEXT)


def base_of(text: str) -> dict[str, Any]:
    return {"version": None, "checksum": checksum(text)}


BIG = (FIXTURES / "werkbaum.werkbaum").read_text(encoding="utf-8")
BASES = st.sampled_from(
    [base_of(PLAN), base_of(BIG), {"version": None, "checksum": "sha256:" + "0" * 64}, None]
)


def calls(*, files: bool) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A tool call of the server's catalogue (``files``: with the plan-file listing, as
    stdio): its name and arguments shaped like its input schema."""
    return st.one_of(
        [
            st.tuples(st.just(spec.name), values(spec.input_schema, "", BASES))
            for spec in catalogue(read_only=False, files=files)
        ]
    )


def on_document(
    document: str, of: st.SearchStrategy[tuple[str, dict[str, Any]]]
) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """The calls of ``of``, three in four of them on ``document`` instead of their source."""

    def aim(call: tuple[str, dict[str, Any]], odd: int) -> tuple[str, dict[str, Any]]:
        name, arguments = call
        if odd and "source" in arguments:
            arguments = {**arguments, "source": document}
        return name, arguments

    return st.builds(aim, of, st.integers(0, 3))


class Talk(Protocol):
    """A server session: one JSON-RPC ``tools/call`` in, its answer message out."""

    def call(self, number: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


def check(name: str, arguments: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any] | str:
    """The structured result of a call that went through, the code of a tool error."""
    assert "result" in answer, answer
    result = answer["result"]
    if result.get("isError"):
        code = json.loads(result["content"][0]["text"])["error"]["code"]
        assert code in DOCUMENTED, (name, arguments, result)
        return str(code)
    data: dict[str, Any] = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == data
    added = data.get("warnings", {}).get("added", []) if "ops" in data else []
    if not arguments.get("allowWarnings"):
        assert not [w for w in added if w.get("structural")], (name, arguments, added)
    return data


def in_production(talk: Talk, number: int, source: str) -> int:
    """How many nodes of ``source`` are ``[^]``, as the server's own analysis says."""
    answer = talk.call(f"prod-{number}", "werkbaum_inspect", {"source": source})
    result = answer["result"]
    if result.get("isError"):  # the source is not a plan (any more)
        return 0
    count, stack = 0, list(result["structuredContent"].get("tree", []))
    while stack:
        node = stack.pop()
        count += node.get("status") == "^"
        stack.extend(node.get("children", []))
    return count


class Agent:
    """Random calls on one session, with what an agent keeps: the last base per source.
    Around each write, the test counts the source's ``[^]`` nodes."""

    def __init__(self, talk: Talk, sources: list[str]) -> None:
        self.talk = talk
        self.known: dict[str, Any] = {}
        for source in sources:  # as an agent starts: read what it will work on
            read = talk.call(f"read {source}", "werkbaum_read", {"source": source})
            self.known[source] = read["result"]["structuredContent"]["base"]

    def act(
        self, data: st.DataObject, number: int, calls: st.SearchStrategy[tuple[str, dict[str, Any]]]
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """One drawn call, checked; the arguments and result of a write that went
        through and was not a dry run, else ``None``."""
        name, arguments = data.draw(calls, label=f"call {number}")
        source = str(arguments.get("source"))
        if "base" in arguments and source in self.known and data.draw(st.integers(0, 3)):
            arguments["base"] = self.known[source]
        before = in_production(self.talk, number, source) if "base" in arguments else 0
        done = check(name, arguments, self.talk.call(number, name, arguments))
        event(f"{name}: {done if isinstance(done, str) else 'went through'}")
        if isinstance(done, str):
            return None
        if isinstance(done.get("base"), dict):
            self.known[source] = done["base"]
        if "ops" not in done or arguments.get("dryRun"):
            return None
        if not arguments.get("allowProd"):
            after = in_production(self.talk, number, source)
            assert after <= before, (name, arguments, done)
        return arguments, done


SHORT = st.integers(15, 30)
"""Calls per session where a session costs little to start (in-process HTTP)."""


def with_a_human(
    data: st.DataObject,
    agent: Agent,
    human: Human,
    document: str,
    of: st.SearchStrategy[tuple[str, dict[str, Any]]],
    count: st.SearchStrategy[int] = SHORT,
) -> None:
    """``count`` calls, most of them on ``document``, while ``human`` adds a line to it
    before about every fifth. After each write on it, the result's base is the
    version and checksum the backend holds, and a line the human added may only be
    gone after a write whose base had it (merged in otherwise, or the write refused
    as a conflict)."""
    unseen: dict[str, int] = {}
    """Each line the human added, with the version that first had it."""
    aimed = on_document(document, of)
    for number in range(data.draw(count, label="calls")):
        if data.draw(st.integers(0, 4), label=f"human before {number}") == 0:
            lines = human.get(document)["content"].split("\n")
            at = data.draw(st.integers(0, len(lines) - 1), label="at")
            line = f"  - [ ] Human line {number}"
            unseen[line] = human.patch(document, [{"op": "insert", "index": at, "lines": [line]}])
        went = agent.act(data, number, aimed)
        if went is None or went[0].get("source") != document:
            continue
        event(f"document write: {'merged' if 'merged' in went[1] else 'on its base'}")
        stored = human.get(document)
        assert went[1]["base"] == {
            "version": stored["version"],
            "checksum": checksum(stored["content"]),
        }
        base = went[0]["base"]
        seen = base["version"] if isinstance(base, dict) else 0
        now = stored["content"].split("\n")
        for line, version in list(unseen.items()):
            if line not in now:  # gone: only a write that had seen it may do that
                assert version <= seen, (line, version, went)
                del unseen[line]
