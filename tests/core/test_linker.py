"""The v8 executor's linker: ES modules as scripts, with the semantics node gives them.

A differential test runs one module graph that uses every construct the linker
translates natively on node and linked on V8, and compares what the modules
observed; the bundled modules and the test harnesses link; every construct the
linker does not translate is refused with the module, the line and the reason.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from py_mini_racer import MiniRacer

from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine, EngineError
from werkbaum_core.engine.linker import Linked, LinkRefused, link
from werkbaum_core.engine.modules import ENTRIES, ModuleSet, bundled_dir

REPO = Path(__file__).resolve().parents[2]
HARNESSES = sorted((REPO / "tests" / "js").glob("*.js"))

GRAPH = {
    "side.js": "globalThis.order = (globalThis.order || []).concat('side');\n",
    "counter.js": """\
globalThis.order.push('counter');
export let count = 0;
export function bump() { count += 1; return count; }
export default class Box { constructor(v) { this.v = v; } }
export { count as alias };
""",
    "shapes.js": """\
// import { fake } from './nowhere.js';  -- a comment, not an import
globalThis.order.push('shapes');
const template = `export const notReal = 1; import x from './nowhere.js'; ${1 + 1}`;
const slash = /export function nope\\/[a-z]+/u;
export const TEXT = template + String(slash.test('export function nope/ab'));
export async function later() { return 1; }
export function* numbers() { yield 1; yield 2; }
export class Counter {
  static #made = 0;
  static { Counter.ready = true; }
  static make() { return ++Counter.#made; }
}
export const half = 4 / 2, third = 9 / 3;
""",
    "reexports.js": """\
globalThis.order.push('reexports');
export { bump as increment, default as BoxAgain } from './counter.js';
export * from './shapes.js';
export * as counterModule from './counter.js';
const local = 'local value';
export { local as renamed };
export default function () { return 'anonymous default'; }
""",
    "main.js": """\
import './side.js';
import Box, * as counter from './counter.js';
import anonymous, { increment, renamed, TEXT, half, third, counterModule } from './reexports.js';
import * as all from './reexports.js';
globalThis.order.push('main');
const before = counter.count;
increment();
increment();
const describe = (ns) => ({
  keys: Object.keys(ns),
  tag: Object.prototype.toString.call(ns),
  extensible: Object.isExtensible(ns),
  proto: Object.getPrototypeOf(ns),
});
globalThis.result = {
  order: globalThis.order,
  before,
  after: counter.count,
  alias: counter.alias,
  throughStar: counterModule.count,
  box: new Box(7).v,
  anonymous: anonymous(),
  renamed,
  TEXT,
  sums: half + third,
  topLevelThis: typeof this,
  counter: describe(counter),
  all: describe(all),
  star: Object.keys(all).includes('numbers') && !Object.keys(all).includes('default'),
};
""",
}


def write(directory: Path, modules: dict[str, str]) -> Path:
    directory.mkdir(exist_ok=True)
    (directory / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    for name, source in modules.items():
        (directory / name).write_text(source, encoding="utf-8")
    return directory


def locate_in(directory: Path):  # type: ignore[no-untyped-def]
    return lambda name: (directory / name) if (directory / name).is_file() else None


def run_linked(linked: Linked, result: str) -> object:
    with MiniRacer() as ctx:
        for script in linked.scripts:
            ctx.eval(script.source)
        for entry in linked.entries:
            ctx.eval(f"__wbLinker.require({json.dumps(entry)})")
        return json.loads(str(ctx.eval(f"JSON.stringify({result})")))


@pytest.mark.usefixtures("node_installed")
def test_linked_modules_behave_as_node_runs_them(tmp_path: Path) -> None:
    directory = write(tmp_path / "graph", GRAPH)
    native = subprocess.run(
        [
            "node",
            "--input-type=module",
            "-e",
            f"await import({json.dumps((directory / 'main.js').as_uri())});"
            "process.stdout.write(JSON.stringify(globalThis.result));",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    expected = json.loads(native.stdout)
    assert expected["order"] == ["side", "counter", "shapes", "reexports", "main"]
    assert expected["after"] == 2 and expected["before"] == 0  # a live binding
    assert run_linked(link(locate_in(directory), ["main.js"]), "globalThis.result") == expected


def test_every_bundled_module_and_test_harness_links() -> None:
    harnesses = {p.name: p for p in HARNESSES}
    # pictures.js is the entry only `werkbaum render` loads (not in ENTRIES).
    entries = (*ENTRIES, "pictures.js", *harnesses)
    linked = link(lambda n: harnesses.get(n) or ModuleSet().locate(n), entries)
    names = {s.name for s in linked.scripts}
    shipped = {p.name for p in bundled_dir().glob("*.js")}
    assert shipped | set(harnesses) <= names, (shipped | set(harnesses)) - names


def test_linking_keeps_line_numbers() -> None:
    linked = link(ModuleSet().locate, ENTRIES)
    for script in linked.scripts[1:]:
        original = (bundled_dir() / script.name).read_text(encoding="utf-8")
        assert script.source.count("\n") == original.count("\n") + 1, script.name


@pytest.mark.parametrize("kind", EXECUTORS)
def test_every_executor_sees_the_same_exports(kind: str) -> None:
    if kind == "node":
        require_tool("node")
    with Engine.create(kind, frontend="") as engine:
        found = engine.executor.exports()
    with Engine.create("v8", frontend="") as engine:
        assert engine.executor.exports() == found


REFUSED = [
    (
        "dynamic.js",
        "export async function f() { return import('./side.js'); }\n",
        1,
        "dynamic import()",
    ),
    ("meta.js", "\nexport const here = import.meta.url;\n", 2, "import.meta"),
    ("tla.js", "const v = await Promise.resolve(1);\nexport { v };\n", 1, "top-level await"),
    ("bare.js", "import { readFileSync } from 'node:fs';\n", 1, "import of 'node:fs'"),
    ("parent.js", "import x from '../x.js';\n", 1, "import of '../x.js'"),
    ("attrs.js", "import data from './d.json' with { type: 'json' };\n", 1, "import attributes"),
    ("destructure.js", "export const { a, b } = { a: 1, b: 2 };\n", 1, "destructuring"),
    (
        "names.js",
        "const x = 1;\nexport { x as 'a-b' };\n",
        2,
        "a string as an import or export name",
    ),
    ("syntax.js", "export const x = 1 +;\n", 1, "syntax"),
]


@pytest.mark.parametrize(("name", "source", "line", "what"), REFUSED, ids=[r[0] for r in REFUSED])
def test_what_the_linker_does_not_translate_is_refused_by_line(
    tmp_path: Path, name: str, source: str, line: int, what: str
) -> None:
    directory = write(tmp_path / "set", {name: source, "side.js": ""})
    with pytest.raises(LinkRefused) as info:
        link(locate_in(directory), [name])
    message = info.value.message
    assert message.startswith(f"{name}:{line}:"), message
    assert what in message and "--engine node or dukpy" in message, message


def test_an_import_cycle_is_refused(tmp_path: Path) -> None:
    directory = write(
        tmp_path / "set",
        {
            "a.js": "import { b } from './b.js';\nexport const a = 1;\n",
            "b.js": "import { c } from './c.js';\nexport const b = 2;\n",
            "c.js": "import { a } from './a.js';\nexport const c = 3;\n",
        },
    )
    with pytest.raises(LinkRefused, match=r"import cycle a\.js → b\.js → c\.js → a\.js"):
        link(locate_in(directory), ["a.js"])


def test_a_named_import_of_a_changing_binding_is_refused(tmp_path: Path) -> None:
    directory = write(
        tmp_path / "set",
        {"main.js": "\nimport { count } from './counter.js';\n", "counter.js": GRAPH["counter.js"]},
    )
    with pytest.raises(LinkRefused, match=r"^main\.js:2: imports 'count' from counter\.js"):
        link(locate_in(directory), ["main.js"])


def test_a_missing_module_or_export_fails_as_on_node(tmp_path: Path) -> None:
    directory = write(
        tmp_path / "set",
        {
            "main.js": "import { nope } from './counter.js';\n",
            "lost.js": "import './gone.js';\n",
            "counter.js": GRAPH["counter.js"],
        },
    )
    with pytest.raises(EngineError) as info:
        link(locate_in(directory), ["main.js"])
    assert info.value.message == (
        "loading main.js failed: SyntaxError: The requested module './counter.js' does not "
        "provide an export named 'nope' (main.js:1)"
    )
    with pytest.raises(EngineError, match=r"Cannot find module './gone\.js' imported from lost"):
        link(locate_in(directory), ["lost.js"])
