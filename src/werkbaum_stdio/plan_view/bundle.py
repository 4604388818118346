"""ES modules as one classic inline script, for a page that may load nothing.

An MCP App view is one HTML document that a host shows in a sandboxed frame
under its own Content-Security-Policy (the ext-apps default allows
``script-src 'self' 'unsafe-inline'``): an ``import`` of ``./model.js`` would be
a fetch, and ``data:``/``blob:`` module URLs are not allowed either. So the
view's modules are inlined, each in a function scope of its own (two modules
may declare the same private name: ``model.js`` and ``diagram.js`` both have
``EMPTY``), in dependency order, and an import becomes a destructuring of the
earlier module's exports.

That is faithful to the modules' semantics only for the syntax they use, so
the transform accepts exactly that and raises :class:`BundleError` on anything
else (instead of bundling something subtly different):

- exports only as ``export function NAME`` and ``export const NAME =`` at the
  start of a line (no ``export default``, ``export { … }``, ``let``, classes);
- imports only as ``import { a, b } from './module.js';`` on one line, of a
  module bundled before it and of names it exports (an imported binding is then
  a copy, not live: sound because an exported ``const`` or function declaration
  can never be reassigned);
- no dynamic ``import()`` or ``import.meta``, and nothing that would end or
  confuse the inline ``<script>`` element (``</script``, ``<!--``).

Each scope starts with ``'use strict'``: module code is strict, a classic
script is not. Each is a plain ``function`` called without a receiver, so
``this`` is ``undefined`` at a module's top level, as in a module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import attrs

EXPORT = re.compile(r"^export (?:function|const) ([A-Za-z_$][\w$]*)", re.MULTILINE)
IMPORT = re.compile(r"^import \{([^}]*)\} from '\./([\w-]+\.js)';[ \t]*$", re.MULTILINE)
LEFT_OVER = re.compile(r"^[ \t]*(?:export|import)\b|\bimport\s*\(|\bimport\.meta\b", re.MULTILINE)
ENDS_SCRIPT = re.compile(r"</script|<!--", re.IGNORECASE)
NAME = re.compile(r"[A-Za-z_$][\w$]*")
REGISTRY = "__bundled"
"""The script's one name of its own (the modules' exports by file name); no module may use it."""


class BundleError(ValueError):
    """A module uses syntax the classic-script transform cannot carry over faithfully."""


@attrs.frozen
class Module:
    """One ES module: its file name (``diagram.js``) and its source text."""

    name: str
    source: str


def exported_names(module: Module) -> list[str]:
    """The names a module exports, in source order."""
    return EXPORT.findall(module.source)


def in_dependency_order(entry: str, read: Callable[[str], str]) -> list[Module]:
    """``entry`` and every module it imports, transitively, each after what it imports.

    ``read`` gives a module's source by file name (names are ``[\\w-]+.js``: an import
    cannot point outside the directories ``read`` chooses from).
    """
    order: list[Module] = []
    done: dict[str, bool] = {}  # False while a module's imports are being visited

    def visit(name: str) -> None:
        if done.get(name):
            return
        if name in done:
            raise BundleError(f"the imports of {name} form a cycle")
        done[name] = False
        source = read(name)
        for match in IMPORT.finditer(source):
            visit(match.group(2))
        done[name] = True
        order.append(Module(name, source))

    visit(entry)
    return order


def _imports(module: Module, available: dict[str, list[str]]) -> str:
    """The module's source with each import replaced by a destructuring of the exports
    of an earlier module; raises :class:`BundleError` for anything else."""

    def replace(match: re.Match[str]) -> str:
        names = [n.strip() for n in match.group(1).split(",") if n.strip()]
        origin = match.group(2)
        if origin not in available:
            raise BundleError(f"{module.name} imports {origin}, which is not bundled before it")
        for imported in names:
            if not NAME.fullmatch(imported):
                raise BundleError(f"{module.name}: unsupported import item {imported!r}")
            if imported not in available[origin]:
                raise BundleError(f"{module.name} imports {imported}, not exported by {origin}")
        return f"const {{ {', '.join(names)} }} = {REGISTRY}[{origin!r}];"

    return IMPORT.sub(replace, module.source)


def classic_script(modules: Sequence[Module]) -> str:
    """The modules, in dependency order, as the text of one classic script.

    The last module is the entry: it runs last, and what it exports stays inside
    the script (a page gets no globals from it).
    """
    available: dict[str, list[str]] = {}
    parts = ["(function () {", "'use strict';", f"const {REGISTRY} = Object.create(null);"]
    for module in modules:
        if re.search(rf"\b{REGISTRY}\b", module.source):
            raise BundleError(f"{module.name} uses the name {REGISTRY}, which the bundle reserves")
        body = EXPORT.sub(lambda m: m.group(0).removeprefix("export "), _imports(module, available))
        left = LEFT_OVER.search(body)
        if left is not None:
            line = body.count("\n", 0, left.start()) + 1
            raise BundleError(f"{module.name}:{line}: unsupported module syntax {left.group(0)!r}")
        names = exported_names(module)
        available[module.name] = names
        parts += [
            f"{REGISTRY}[{module.name!r}] = (function () {{",
            "'use strict';",
            body.rstrip("\n"),
            f"return {{ {', '.join(names)} }};",
            "})();",
        ]
    parts.append("})();")
    script = "\n".join(parts) + "\n"
    found = ENDS_SCRIPT.search(script)
    if found is not None:
        raise BundleError(f"the bundle contains {found.group(0)!r}, which would end its <script>")
    return script
