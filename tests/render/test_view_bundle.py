"""The classic-script bundle of the MCP App view (``werkbaum_stdio.plan_view.bundle``).

The transform is checked where it could go wrong: modules with clashing private names,
imports between them, strictness and ``this`` as in a module, and a refusal for every
piece of module syntax it does not carry over. On the real modules, the bundled
``drawPlan`` (run in QuickJS as a classic script) draws the very bytes of ``werkbaum
render``; ``test_app_browser.py`` shows the same for the view in Chromium.
"""

from __future__ import annotations

import json
from typing import Any

import dukpy
import pytest

from tests.conftest import REFERENCE_PLAN
from tests.render.pictures import picture
from werkbaum_core import Engine
from werkbaum_stdio.plan_view import ENTRY, module_source, plan_view
from werkbaum_stdio.plan_view.bundle import (
    BundleError,
    Module,
    classic_script,
    in_dependency_order,
)
from werkbaum_stdio.render_cli import PICTURES_ENTRY

A = """const EMPTY = [];
export const ANSWER = 42;
export function listOf(n) { return EMPTY.concat([n]); }
"""
B = """import { ANSWER, listOf } from './a.js';
const EMPTY = 'b';
export function report() { return [ANSWER, listOf(1), EMPTY, this === undefined]; }
"""


def run(modules: list[Module], expression: str) -> Any:
    """The bundle run as a classic script in QuickJS; the entry leaves its answer on
    ``globalThis.answer`` (a bundle defines no globals of its own)."""
    return dukpy.evaljs(classic_script(modules) + expression)


def test_modules_keep_their_own_private_names_and_import_each_other() -> None:
    entry = Module("c.js", "import { report } from './b.js';\nglobalThis.answer = report();\n")
    modules = [Module("a.js", A), Module("b.js", B), entry]
    assert run(modules, "globalThis.answer") == [42, [1], "b", True]


def test_each_module_is_strict_as_a_module_is() -> None:
    sloppy = Module(
        "s.js",
        "try { undeclared = 1; globalThis.answer = 'sloppy'; }\n"
        "catch (e) { globalThis.answer = e.name; }\n",
    )
    assert run([sloppy], "globalThis.answer") == "ReferenceError"


def test_the_bundle_leaves_no_globals() -> None:
    assert run([Module("a.js", A)], "typeof ANSWER + typeof __bundled") == "undefinedundefined"


def test_modules_come_in_dependency_order() -> None:
    sources = {"a.js": A, "b.js": B, "c.js": "import { report } from './b.js';\n"}
    assert [m.name for m in in_dependency_order("c.js", sources.__getitem__)] == [
        "a.js",
        "b.js",
        "c.js",
    ]


def test_an_import_cycle_is_refused() -> None:
    sources = {
        "a.js": "import { b } from './b.js';\nexport const a = 1;\n",
        "b.js": "import { a } from './a.js';\nexport const b = 2;\n",
    }
    with pytest.raises(BundleError, match="cycle"):
        in_dependency_order("a.js", sources.__getitem__)


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("export default function f() {}\n", "unsupported module syntax"),
        ("const a = 1;\nexport { a };\n", "unsupported module syntax"),
        ("export let a = 1;\n", "unsupported module syntax"),
        ("export class A {}\n", "unsupported module syntax"),
        ("export async function f() {}\n", "unsupported module syntax"),
        ("import * as a from './a.js';\n", "unsupported module syntax"),
        ("import { ANSWER as x } from './a.js';\n", "unsupported import item"),
        ("import { nothing } from './a.js';\n", "not exported by a.js"),
        ("import { x } from './later.js';\n", "not bundled before it"),
        ("const m = import('./a.js');\n", "unsupported module syntax"),
        ("const u = import.meta.url;\n", "unsupported module syntax"),
        ("const s = '</script>';\n", "would end its <script>"),
        ("const s = '<!-- x';\n", "would end its <script>"),
        ("const __bundled = 1;\n", "reserves"),
    ],
)
def test_syntax_it_cannot_carry_over_is_refused(source: str, problem: str) -> None:
    with pytest.raises(BundleError, match=problem):
        classic_script([Module("a.js", A), Module("x.js", source)])


def test_the_view_bundles_the_diagram_and_its_model() -> None:
    modules = in_dependency_order(ENTRY, module_source)
    assert [m.name for m in modules] == ["model.js", "diagram.js", "view.js"]
    assert classic_script(modules) in plan_view().html


def test_the_bundled_diagram_draws_the_cli_bytes() -> None:
    """Both private EMPTYs, the fold rule imported from model.js, and every number the
    drawing writes survive the transform: same bytes as the engine's picture entry."""
    drawn = "import { drawPlan } from './diagram.js';\n" + (
        "globalThis.answer = drawPlan(dukpy.analysis, "
        "{ format: 'svg', expand: dukpy.expand, title: 'werkbaum.werkbaum' });\n"
    )
    sources = {"entry.js": drawn}
    modules = in_dependency_order("entry.js", lambda n: sources.get(n) or module_source(n))
    script = classic_script(modules) + "globalThis.answer"
    with Engine.create("dukpy", frontend="", extra_entries=[PICTURES_ENTRY]) as engine:
        analysis = json.loads(engine.analysis_text(REFERENCE_PLAN.read_text(encoding="utf-8")))
        for expand in (False, True):
            cli = picture(engine, REFERENCE_PLAN, fmt="svg", expand=expand)
            assert dukpy.evaljs(script, analysis=analysis, expand=expand) == cli
