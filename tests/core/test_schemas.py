"""Portable, complete schemas (issue 14, item 8): no ``type`` arrays anywhere, a
description on every input property, the tools in the order an agent works, and
results without null fields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import REFERENCE_PLAN
from tests.core.one_store import OneStore
from werkbaum_core import Engine, checksum
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Services, ToolSpec
from werkbaum_core.rules.schemas import MAX_ID_CHARS
from werkbaum_core.stores import MemoryStore

ORDER = [
    "werkbaum_read",
    "werkbaum_inspect",
    "werkbaum_list",
    "werkbaum_set_status",
    "werkbaum_set_size",
    "werkbaum_add_node",
    "werkbaum_move_node",
    "werkbaum_remove_node",
    "werkbaum_apply_ops",
    "werkbaum_write",
]


def subschemas(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object inside ``schema``, with its JSON path."""
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            yield from subschemas(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from subschemas(value, f"{path}/{i}")


def properties(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every declared property of an input schema, nested ones (objects, items) included."""
    for name, prop in schema.get("properties", {}).items():
        yield f"{path}.{name}", prop
        yield from properties(prop, f"{path}.{name}")
        if isinstance(prop.get("items"), dict):
            yield from properties(prop["items"], f"{path}.{name}[]")


def test_the_tools_come_in_working_order() -> None:
    assert [t.name for t in CATALOGUE] == ORDER


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda t: t.name)
def test_no_type_arrays(spec: ToolSpec) -> None:
    for side in (spec.input_schema, spec.output_schema):
        for path, schema in subschemas(side):
            assert not isinstance(schema.get("type"), list), f"{spec.name}{path}"


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda t: t.name)
def test_every_input_property_is_described(spec: ToolSpec) -> None:
    for path, prop in properties(spec.input_schema):
        assert prop.get("description"), f"{spec.name}{path} has no description"


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda t: t.name)
def test_every_node_ref_argument_is_bounded(spec: ToolSpec) -> None:
    """Round 22, F2: an unbounded id made "did you mean" quadratic; the schema check runs
    the bounds first, so a long id costs no more than its length."""
    for path, prop in properties(spec.input_schema):
        if path.rsplit(".", 1)[-1] in ("id", "parent", "after"):
            assert prop.get("maxLength") == MAX_ID_CHARS, f"{spec.name}{path}"


def nulls(value: Any, path: str = "") -> Iterator[str]:
    if value is None:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from nulls(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from nulls(item, f"{path}[{i}]")


def test_results_carry_no_nulls_but_a_file_base_version(engine: Engine) -> None:
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    services = Services(engine=engine, sources=OneStore(MemoryStore({"p": text})))
    tools = {t.name: t for t in CATALOGUE}
    base = {"checksum": checksum(text)}
    calls = [
        ("werkbaum_read", {"source": "p"}),
        ("werkbaum_read", {"source": "werkbaum://guide"}),
        ("werkbaum_inspect", {"source": "p"}),
        ("werkbaum_inspect", {"source": "p", "include": ["stations"], "find": "path"}),
        ("werkbaum_inspect", {"source": "p", "depth": 1, "hideDone": True}),
        (
            "werkbaum_set_size",
            {"source": "p", "base": base, "id": "wb", "size": "XL", "dryRun": True},
        ),
    ]
    for name, args in calls:
        data = tools[name].call(services, args, Caller()).data
        assert list(nulls(data)) == ([".base.version"] if "base" in data else []), name
