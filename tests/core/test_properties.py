"""Robustness: any text analyses without raising or hanging, identically on every executor."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fixture_plans
from tests.plangen import plan
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine

FIXTURE_LINES = [
    line for path in fixture_plans() for line in path.read_text(encoding="utf-8").split("\n")
]
TOKENS = [
    "- ",
    "| ",
    "= ",
    "+ ",
    "  ",
    "\t",
    "[x] ",
    "[ ] ",
    "[^] ",
    "[z] ",
    "[-] ",
    "> ",
    "< ",
    "#a ",
    "#a: ",
    ":#a",
    ":#b,#c",
    "#b ",
    "@anna ",
    "&taiga.p ",
    "(M) ",
    "(XXL) ",
    "!!! ",
    '" ',
    "---",
    " \\",
    "%% ",
    "https://x.org/a#b ",
    "Label ",
    "#US-12 ",
    "\n",
    "\n",
]


@pytest.fixture(scope="module")
def engines() -> Iterator[list[Engine]]:
    require_tool("node")
    started = [Engine.create(kind, frontend="") for kind in EXECUTORS]
    yield started
    for eng in started:
        eng.close()


def _same_everywhere(engines: list[Engine], text: str) -> None:
    results = [json.dumps(eng.analyze_json(text), ensure_ascii=False) for eng in engines]
    assert all(r == results[0] for r in results), "executors disagree"


notation_soup = st.lists(st.sampled_from(TOKENS), max_size=80).map("".join)
mutated = st.lists(st.sampled_from(FIXTURE_LINES), max_size=60).map("\n".join)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(text=st.text(max_size=400))
def test_arbitrary_unicode(engines: list[Engine], text: str) -> None:
    _same_everywhere(engines, text)


@SETTINGS
@given(text=notation_soup)
def test_notation_token_soup(engines: list[Engine], text: str) -> None:
    _same_everywhere(engines, text)


@SETTINGS
@given(text=mutated)
def test_shuffled_fixture_lines(engines: list[Engine], text: str) -> None:
    _same_everywhere(engines, text)


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(" " * i + "- deep" for i in range(1990)),  # past QuickJS native JSON depth
        "\n".join("  " * (i % 40) + f"- [ ] #n{i}: Node {i} (S) @p{i % 7}" for i in range(10_000)),
        "- " + "#" * 50_000,
        "- " + ":#a," * 20_000,
        "- " + "(M" * 30_000,
        "- " + " \\\n" * 5_000,
        "x " * 100_000,
        "@" * 100_000 + "\n" + "&" * 100_000,
        "\x00\x01\ufffd\ud7ff" * 1000,
    ],
    ids=[
        "deep-1990",
        "lines-10000",
        "hashes",
        "dep-list",
        "parens",
        "continuations",
        "long-line",
        "tag-runs",
        "control-chars",
    ],
)
def test_pathological_inputs(engines: list[Engine], text: str) -> None:
    _same_everywhere(engines, text)


@pytest.mark.parametrize("seed", range(5))
def test_generated_plans_agree(engines: list[Engine], seed: int) -> None:
    _same_everywhere(engines, plan(1500, seed))


def test_deepest_possible_nesting_structures_into_typed_objects(engine: Engine) -> None:
    text = "\n".join(" " * i + "-x" for i in range(1990))
    analysis = engine.analyze(text)
    assert len(analysis.nodes()) == 1990
