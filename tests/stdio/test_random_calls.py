"""Any tool call shaped like its input schema gets a documented answer, and no write
slips past a guard rail or out of the roots.

Hypothesis draws sessions of tool calls from the catalogue's own input schemas
(ids, sources, status codes, node lines and plan texts from pools that hit the
notation's corners, mixed with arbitrary text), one call after the other, and
each session runs through a real ``werkbaum-mcp`` process over its pipes, one
project directory per session. A write mostly carries the base the session last
got for its source, as an agent's would, so that writes go through and the
guard rails are met, not only conflicts.

What must hold for every call: exactly one answer; a tool error only with a code
the README documents (never ``engine_error`` or an unstructured "Error executing
tool"); a write that went through without ``allowWarnings`` added no structural
warning, and none without ``allowProd`` left more nodes ``[^]`` than before
(counted by ``werkbaum_inspect`` after each write). After the session the file
outside the root is untouched and the server exits 0 when stdin closes. The same
calls on a shared document (the local backend) while a human adds lines between
them must never lose a line the writing agent had not seen.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.backend import Backend
from tests.backend.human import Human
from tests.conftest import FIXTURES
from tests.core.test_errors import TOOL_CODES
from tests.stdio.test_pipes import HANDSHAKE, encoded, start
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
    [PLAN, PLAN.replace("  - [ ] #b", "  | [ ] #b"), PLAN + "- [^] #p: Prod\n", "", "- A\n"]
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
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return BY_NAME.get(name, TEXT)


def base_of(text: str) -> dict[str, Any]:
    return {"version": None, "checksum": checksum(text)}


BIG = (FIXTURES / "werkbaum.werkbaum").read_text(encoding="utf-8")
BASES = st.sampled_from(
    [base_of(PLAN), base_of(BIG), {"version": None, "checksum": "sha256:" + "0" * 64}, None]
)
CALLS = st.one_of(
    [
        st.tuples(st.just(spec.name), values(spec.input_schema, "", BASES))
        for spec in catalogue(read_only=False, files=True)
    ]
)


class Session:
    """One server process spoken to one request at a time over its pipes."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(encoded(message))
        self.process.stdin.flush()

    def answer(self, request_id: int | str, timeout: float = 60) -> dict[str, Any]:
        """The next message with ``request_id``; the first other one with an id fails."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message: dict[str, Any] = json.loads(line)
                if "id" in message:
                    assert message["id"] == request_id, message
                    return message
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to {request_id} within {timeout} s"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                assert chunk, "the server closed its stdout"
                self._buffer += chunk

    def call(self, number: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
        return self.answer(number)


@contextmanager
def session(project: Path, *options: str) -> Iterator[Session]:
    """A served session; at its end stdin closes and the server must exit 0."""
    process = start(project, *options)
    try:
        talk = Session(process)
        talk.send(HANDSHAKE[0])
        talk.answer(HANDSHAKE[0]["id"])
        talk.send(HANDSHAKE[1])
        yield talk
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def _check(name: str, arguments: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any] | str:
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


def _in_production(talk: Session, number: int, source: str) -> int:
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


def _project(home: Path) -> Path:
    project, outside = home / "project", home / "outside"
    for folder in (project, project / "sub", outside):
        folder.mkdir()
    (project / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    shutil.copy(FIXTURES / "werkbaum.werkbaum", project / "big.werkbaum")
    (project / "notes.txt").write_text(PLAN, encoding="utf-8")
    (outside / "secret.werkbaum").write_text(OUTSIDE, encoding="utf-8")
    return project


class Agent:
    """Random calls on one session, with what an agent keeps: the last base per source,
    and (for the test) how many nodes of each source are ``[^]``."""

    def __init__(self, talk: Session, sources: list[str]) -> None:
        self.talk = talk
        self.known: dict[str, Any] = {}
        self.prod: dict[str, int] = {}
        for source in sources:  # as an agent starts: read what it will work on
            read = talk.call(f"read {source}", "werkbaum_read", {"source": source})
            self.known[source] = read["result"]["structuredContent"]["base"]
            self.prod[source] = _in_production(talk, -1, source)

    def act(self, data: st.DataObject, number: int, calls: st.SearchStrategy[Any]) -> Any:
        """One drawn call, checked; the arguments and result of a write that went
        through and was not a dry run, else ``None``."""
        name, arguments = data.draw(calls, label=f"call {number}")
        source = str(arguments.get("source"))
        if "base" in arguments and source in self.known and data.draw(st.integers(0, 3)):
            arguments["base"] = self.known[source]
        done = _check(name, arguments, self.talk.call(number, name, arguments))
        event(f"{name}: {done if isinstance(done, str) else 'went through'}")
        if isinstance(done, str):
            return None
        if isinstance(done.get("base"), dict):
            self.known[source] = done["base"]
        if "ops" not in done or arguments.get("dryRun"):
            return None
        now = _in_production(self.talk, number, source)
        if not arguments.get("allowProd"):
            assert now <= self.prod.get(source, 0), (name, arguments, done)
        self.prod[source] = now
        return arguments, done


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_calls_get_documented_answers_and_respect_the_guard_rails(
    data: st.DataObject,
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        project = _project(Path(scratch))
        with session(project) as talk:
            agent = Agent(talk, ["plan.werkbaum", "big.werkbaum"])
            for number in range(data.draw(st.integers(15, 30), label="calls")):
                agent.act(data, number, CALLS)
        home = Path(scratch)
        assert (home / "outside" / "secret.werkbaum").read_text(encoding="utf-8") == OUTSIDE
        assert (project / "notes.txt").read_text(encoding="utf-8") == PLAN


def _on_document(document: str) -> st.SearchStrategy[Any]:
    """The calls of :data:`CALLS`, half of them on ``document`` instead of their source."""

    def aim(call: tuple[str, dict[str, Any]], on_it: bool) -> tuple[str, dict[str, Any]]:
        name, arguments = call
        if on_it and "source" in arguments:
            arguments = {**arguments, "source": document}
        return name, arguments

    return st.builds(aim, CALLS, st.booleans())


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_calls_on_a_document_a_human_edits_meanwhile_lose_no_human_line(
    data: st.DataObject, backend: Backend, human: Human
) -> None:
    """The same calls on a shared document, while a human adds lines to it between
    them: a write whose base is older than a human's line must keep that line (merged
    in, or refused as a conflict), whatever the write was."""
    document = human.create(PLAN)
    unseen: dict[str, int] = {}
    """Each line the human added, with the version that first had it."""
    with tempfile.TemporaryDirectory() as scratch:
        project = _project(Path(scratch))
        with session(project, "--server", backend.base_url) as talk:
            agent = Agent(talk, [document, "plan.werkbaum"])
            calls = _on_document(document)
            for number in range(data.draw(st.integers(15, 30), label="calls")):
                if data.draw(st.integers(0, 4), label=f"human before {number}") == 0:
                    lines = human.get(document)["content"].split("\n")
                    at = data.draw(st.integers(0, len(lines) - 1), label="at")
                    line = f"  - [ ] Human line {number}"
                    ops = [{"op": "insert", "index": at, "lines": [line]}]
                    unseen[line] = human.patch(document, ops)
                went = agent.act(data, number, calls)
                if went is None or went[0].get("source") != document:
                    continue
                event(f"document write: {'merged' if 'merged' in went[1] else 'on its base'}")
                base = went[0]["base"]
                seen = base["version"] if isinstance(base, dict) else 0
                now = human.get(document)["content"].split("\n")
                for line, version in list(unseen.items()):
                    if line not in now:  # gone: only a write that had seen it may do that
                        assert version <= seen, (line, version, went)
                        del unseen[line]
