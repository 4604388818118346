"""A checkout's module set (``--frontend DIR``): it loads, or says exactly why not, in one
line, on every executor (spec §2.1; issue 16 item 3)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import werkbaum_core.engine as engine_module
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine, EngineError, ModuleSetError
from werkbaum_core.engine import choose_executor
from werkbaum_core.engine.dukpy_executor import DukpyExecutor
from werkbaum_core.engine.dukpy_process import DukpyProcessExecutor
from werkbaum_core.engine.linker import LinkRefused
from werkbaum_core.engine.modules import REQUIRED_EXPORTS, ModuleSet, Program, bundled_dir
from werkbaum_core.engine.node_executor import NodeExecutor
from werkbaum_core.engine.protocol import Executor, Limits
from werkbaum_core.engine.v8_executor import V8Executor
from werkbaum_core.errors import EngineTimeout, WerkbaumError

OLDER_PARSER = ("sizeMin", "logicalLines", "shortIdClosed")
OLDER_MODEL = ("assumedSize", "initialCollapsed", "taigaSlugs")


def _create(kind: str, frontend: Path) -> Engine:
    if kind == "node":
        require_tool("node")
    return Engine.create(kind, frontend=frontend)


def _without_exports(module: str, names: tuple[str, ...]) -> str:
    """The bundled module as an older release would have it: these functions not exported."""
    source = (bundled_dir() / module).read_text(encoding="utf-8")
    for name in names:
        exported = f"export function {name}("
        assert exported in source, f"the test needs {name} exported as a function"
        source = source.replace(exported, f"function {name}(")
    return source


def checkout(tmp_path: Path, **modules: str) -> Path:
    """A directory laid out like a checkout's ``frontend/src``: the given modules, plus
    files a real one has that the engine never loads."""
    directory = tmp_path / "frontend-src"
    directory.mkdir()
    for name, source in modules.items():
        (directory / f"{name}.js").write_text(source, encoding="utf-8")
    (directory / "main.js").write_text("import './App.vue';\ndocument.title = 'x';\n")
    (directory / "App.vue").write_text("<template><div/></template>\n")
    return directory


@pytest.mark.parametrize("kind", EXECUTORS)
def test_an_older_checkout_names_every_missing_export_in_one_line(
    kind: str, tmp_path: Path
) -> None:
    # The bundled edit.js and taiga.js import from the checkout's parser.js: the names
    # it lacks must not stop linking before the contract check has spoken.
    older = checkout(
        tmp_path,
        parser=_without_exports("parser.js", OLDER_PARSER),
        model=_without_exports("model.js", OLDER_MODEL),
    )
    with pytest.raises(ModuleSetError) as info:
        _create(kind, older)
    assert info.value.message == (
        "module set lacks required exports: "
        "parser.js: logicalLines, sizeMin, shortIdClosed; "
        "model.js: assumedSize, taigaSlugs, initialCollapsed"
    )
    assert info.value.details["missing"] == {
        "parser.js": ["logicalLines", "sizeMin", "shortIdClosed"],
        "model.js": ["assumedSize", "taigaSlugs", "initialCollapsed"],
    }


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_module_that_throws_while_loading_shows_the_js_error(
    kind: str, tmp_path: Path
) -> None:
    parser = (bundled_dir() / "parser.js").read_text(encoding="utf-8")
    broken = checkout(tmp_path, parser=parser + "\nthrow new TypeError('needs a browser');\n")
    with pytest.raises(EngineError) as info:
        _create(kind, broken)
    message = info.value.message
    assert message.startswith("loading exports.js failed: TypeError: needs a browser"), message
    assert "\n" not in message


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_import_of_a_name_nobody_exports_is_named(kind: str, tmp_path: Path) -> None:
    model = (bundled_dir() / "model.js").read_text(encoding="utf-8")
    broken = checkout(tmp_path, model="import { noSuchThing } from './parser.js';\n" + model)
    with pytest.raises(EngineError) as info:
        _create(kind, broken)
    message = info.value.message
    assert message.startswith("loading exports.js failed: SyntaxError: "), message
    assert "noSuchThing" in message
    assert "parser.js" in message
    assert "\n" not in message


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_module_with_a_syntax_error_is_a_syntax_error(kind: str, tmp_path: Path) -> None:
    broken = checkout(tmp_path, i18n="export const MESSAGES = {\n  a: 1,,\n};\n")
    with pytest.raises(EngineError) as info:
        _create(kind, broken)
    message = info.value.message
    assert message.startswith("loading exports.js failed: SyntaxError: "), message
    assert "\n" not in message


def test_the_v8_linker_names_the_line_it_cannot_read(tmp_path: Path) -> None:
    broken = checkout(tmp_path, i18n="export const MESSAGES = {\n  a: 1 +;\n};\n")
    with pytest.raises(LinkRefused, match=r"^i18n\.js:2:\d+: a syntax error, or ") as info:
        Engine.create("v8", frontend=broken)
    # node and dukpy reject a real syntax error too: no advice to choose them instead.
    assert "choose" not in info.value.message
    assert "names the error" in info.value.message


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_with_the_whole_contract_loads_module_by_module(
    kind: str, tmp_path: Path
) -> None:
    # The checkout's own i18n.js with another message; everything else is bundled.
    i18n = (bundled_dir() / "i18n.js").read_text(encoding="utf-8")
    assert "unknown status box" in i18n
    own = checkout(tmp_path, i18n=i18n.replace("unknown status box", "status box nobody knows"))
    with _create(kind, own) as engine:
        warnings = engine.analyze_json("- [z] A", include=["warnings"])["warnings"]
    assert any("status box nobody knows" in w["text"] for w in warnings), warnings


def test_checkout_modules_replace_bundled_ones_module_by_module(tmp_path: Path) -> None:
    own = checkout(tmp_path, i18n=(bundled_dir() / "i18n.js").read_text(encoding="utf-8"))
    origins = ModuleSet.from_frontend(own).origins()
    assert origins["i18n.js"] == str(own / "i18n.js")
    assert origins["parser.js"] == "bundled"
    assert set(REQUIRED_EXPORTS) <= set(origins)


@pytest.mark.usefixtures("node_installed")
def test_auto_passes_v8_over_for_a_checkout_it_cannot_link(tmp_path: Path) -> None:
    # import.meta works in an ES module loader, not in a linked script.
    i18n = (bundled_dir() / "i18n.js").read_text(encoding="utf-8")
    own = checkout(tmp_path, i18n=i18n + "\nexport const HERE = import.meta.url;\n")
    assert choose_executor(None, {}) == "v8"
    assert choose_executor(None, {}, frontend=own) == "node"
    with Engine.create("auto", frontend=own) as engine:
        assert engine.kind == "node"
    with Engine.create(frontend=own) as engine:  # the Python API stays in-process
        assert engine.kind == "dukpy"
    with pytest.raises(LinkRefused, match=r"i18n\.js:\d+:\d+: import\.meta"):
        Engine.create("v8", frontend=own)  # asked for by name: refused, not replaced


HOST_MODULES = ("facade", "transport", "writes", "exports", "columns", "diagram", "pictures")
"""Modules of ours a checkout's files of the same name must never replace."""


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_never_replaces_the_facade_or_the_host_modules(
    kind: str, tmp_path: Path
) -> None:
    # Each would change every answer (or break loading) if it were loaded.
    hijack = 'globalThis.werkbaumToJSON = () => \'{"tree":[],"hijacked":true}\';\n'
    own = checkout(
        tmp_path, **{name: hijack + "throw new Error('hijacked');\n" for name in HOST_MODULES}
    )
    assert set(ModuleSet.from_frontend(own).origins().values()) == {"bundled"}
    for name in HOST_MODULES:
        assert ModuleSet.from_frontend(own).locate(f"{name}.js") == bundled_dir() / f"{name}.js"
    with _create(kind, own) as engine:
        answer = engine.analyze_json("- [ ] Plan")
    assert answer["tree"][0]["label"] == "Plan"
    assert "hijacked" not in answer


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_module_the_package_lacks_is_loaded_for_the_checkouts_imports(
    kind: str, tmp_path: Path
) -> None:
    i18n = (bundled_dir() / "i18n.js").read_text(encoding="utf-8")
    own = checkout(
        tmp_path,
        i18n="import { WORDING } from './wording.js';\n"
        + i18n.replace("unknown status box", "' + WORDING + '"),
        wording="export const WORDING = 'status box nobody knows';\n",
    )
    with _create(kind, own) as engine:
        warnings = engine.analyze_json("- [z] A", include=["warnings"])["warnings"]
    assert any("status box nobody knows" in w["text"] for w in warnings), warnings


def _parser_with(first_lines: str = "", last_lines: str = "") -> str:
    parser = (bundled_dir() / "parser.js").read_text(encoding="utf-8")
    return first_lines + parser + last_lines


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_that_poisons_object_prototype_fails_in_one_line(
    kind: str, tmp_path: Path
) -> None:
    # Every JSON answer, the export probe's first, becomes "poisoned".
    poison = "Object.prototype.toJSON = function () { return 'poisoned'; };\n"
    own = checkout(tmp_path, parser=_parser_with(poison))
    with pytest.raises(WerkbaumError) as info:
        _create(kind, own)
    message = info.value.message
    assert "poisoned" in message and "Object.prototype" in message, message
    assert "\n" not in message


@pytest.mark.parametrize(("kind", "separate"), [*((k, False) for k in EXECUTORS), ("dukpy", True)])
def test_a_load_that_never_ends_times_out_once_naming_the_limit(
    kind: str, separate: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The executors' start-up limit is shortened to 1 s; Engine.create must not start a
    # second executor (the export probe) after the first one timed out.
    starts: list[str] = []

    def start(kind: str, program: Program, *, separate_process: bool = False) -> Executor:
        starts.append(kind)
        assert separate_process is separate
        if separate_process:
            return DukpyProcessExecutor(program, limits=Limits(start=1.0))
        if kind == "node":
            require_tool("node")
            return NodeExecutor(program, limits=Limits(start=1.0))
        if kind == "v8":
            return V8Executor(program, limits=Limits(start=1.0))
        return DukpyExecutor(program, limits=Limits(start=1.0))

    monkeypatch.setattr(engine_module, "_start", start)
    own = checkout(tmp_path, parser=_parser_with("for (;;) {}\n"))
    began = time.monotonic()
    with pytest.raises(EngineTimeout) as info:
        Engine.create(kind, frontend=own, separate_process=separate)
    assert time.monotonic() - began < 10
    assert starts == [kind]
    assert "no answer within 1 s" in info.value.message, info.value.message
    assert f"the {kind} executor's limit for loading" in info.value.message


def test_dukpy_out_of_memory_while_loading_says_so(tmp_path: Path) -> None:
    hog = "const hog = []; for (let i = 0; i < 1e9; i++) hog.push('x' + i);\n"
    own = checkout(tmp_path, parser=_parser_with(hog))
    with pytest.raises(EngineError) as info:
        Engine.create("dukpy", frontend=own)
    assert info.value.message.startswith(
        "loading exports.js failed: the dukpy executor ran out of memory"
    ), info.value.message


@pytest.mark.parametrize("kind", ["dukpy", "node"])
def test_top_level_await_loads_on_node_and_is_refused_at_load_on_dukpy(
    kind: str, tmp_path: Path
) -> None:
    own = checkout(tmp_path, parser=_parser_with(last_lines="\nawait Promise.resolve(1);\n"))
    if kind == "dukpy":  # QuickJS's run() does not wait for it: nothing would work
        with pytest.raises(EngineError) as info:
            Engine.create(kind, frontend=own)
        assert info.value.message.startswith(
            "loading facade.js failed: it did not finish evaluating; a module that awaits "
            "at top level?"
        ), info.value.message
        return
    with _create(kind, own) as engine:
        assert engine.analyze_json("- [ ] A")["tree"][0]["label"] == "A"
