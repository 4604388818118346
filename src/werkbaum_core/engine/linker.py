"""Links a module set's ES modules into plain scripts, for an executor without a module loader.

mini-racer (the ``v8`` executor) evaluates scripts only. Rather than check a
generated bundle in (two sources of truth, and a checkout's modules could not
be used), the module set in use is linked when the executor starts: each module
becomes one script that registers a factory function, and a small registry runs
the factories in ES module order (dependencies first, in import order, each once).

The modules are parsed with tree-sitter's JavaScript grammar, so comments,
strings, template literals and regular expressions can never be mistaken for an
``import`` or ``export``. Only those statements are rewritten; every other byte
of a module is kept, and so are its line numbers (error positions stay true).

What ES modules do and a script cannot is refused with :class:`LinkRefused`,
naming the module, the line and the construct: dynamic ``import()``,
``import.meta``, top-level ``await``, import attributes, specifiers other than
``./NAME.js``, import cycles, destructuring exports, and named imports of
``let``/``var`` exports (a named import is bound once, when its module has run,
so it is exact only for bindings that never change). ``auto`` then takes an
executor that loads ES modules natively.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from werkbaum_core.errors import EngineError, ModuleSetError

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query

Locate = Callable[[str], Path | None]
"""Module name (``parser.js``) → the file the module set uses for it, or None."""

_SPECIFIER = re.compile(r"^\./([A-Za-z0-9_.-]+\.m?js)$")
_DECLARATIONS = {
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
}
_UNSUPPORTED = """
(call_expression function: (import)) @dynamic_import
(meta_property) @import_meta
(await_expression) @await
"""
_FUNCTION_SCOPES = {
    "function_declaration",
    "function_expression",
    "generator_function_declaration",
    "generator_function",
    "arrow_function",
    "method_definition",
    "class_static_block",
}

PRELUDE = """\
globalThis.__wbLinker = (() => {
  const factories = Object.create(null);
  const namespaces = Object.create(null);
  const define = (name, factory) => { factories[name] = factory; };
  const exporting = (ns, getters) => {
    for (const key of Object.keys(getters).sort()) {
      Object.defineProperty(ns, key, { get: getters[key], enumerable: true });
    }
    Object.defineProperty(ns, Symbol.toStringTag, { value: 'Module' });
    Object.preventExtensions(ns);
  };
  const require = (name) => {
    let ns = namespaces[name];
    if (ns === undefined) {
      ns = namespaces[name] = Object.create(null);
      const factory = factories[name];  // called bare: this is undefined, as in a module
      factory(ns, require, exporting);
    }
    return ns;
  };
  return { define, require };
})();
"""
"""The registry: ``define`` stores a module's factory, ``require`` runs it once and
returns its namespace object (null prototype, sorted keys, getters: live bindings)."""


class LinkRefused(ModuleSetError):
    """The module set uses a construct the linker does not translate (see the module doc)."""


@attrs.frozen
class Script:
    """One script to evaluate; ``name`` is its ``sourceURL`` in stack traces, ``entry``
    the first entry that imports it (errors name it, as loaders do)."""

    name: str
    source: str
    entry: str


@attrs.frozen
class Linked:
    """Evaluate ``scripts`` in order, then ``__wbLinker.require(entry)`` for each entry."""

    scripts: tuple[Script, ...]
    entries: tuple[str, ...]


def link(locate: Locate, entries: Sequence[str]) -> Linked:
    """The scripts that define ``entries`` and every module they import.

    Raises :class:`LinkRefused` for a construct the linker cannot translate, and
    :class:`EngineError` for what would fail on any executor (a missing module, a
    named import the module does not export), worded as node words it.
    """
    graph = _Graph(locate)
    for entry in entries:
        graph.visit(entry, importer=None, chain=())
    scripts = [Script("werkbaum-linker.js", PRELUDE, entries[0])]
    scripts.extend(
        Script(m.name, m.factory(graph.exports), graph.entry_of[m.name]) for m in graph.order
    )
    return Linked(tuple(scripts), tuple(entries))


@cache
def _parser() -> tuple[Parser, Query]:
    import tree_sitter_javascript
    from tree_sitter import Language, Parser, Query

    language = Language(tree_sitter_javascript.language())
    return Parser(language), Query(language, _UNSUPPORTED)


@attrs.frozen
class _Import:
    module: str
    namespace: str | None = None
    default: str | None = None
    names: tuple[tuple[str, str], ...] = ()
    """(imported name, local name) pairs."""
    line: int = 0


@attrs.define
class _Module:
    name: str
    source: bytes
    requests: list[str] = attrs.Factory(list)
    """Modules this one depends on, in the order ES module evaluation visits them."""
    imports: list[_Import] = attrs.Factory(list)
    local_exports: dict[str, str] = attrs.Factory(dict)
    """Exported name → local binding."""
    reexports: dict[str, tuple[str, str | None, int]] = attrs.Factory(dict)
    """Exported name → (module, its export name or None for the whole namespace, line)."""
    star_from: list[str] = attrs.Factory(list)
    mutable: set[str] = attrs.Factory(set)
    """Local bindings declared with let or var."""
    edits: list[tuple[int, int, bytes]] = attrs.Factory(list)

    def refuse(
        self,
        node: Node,
        what: str,
        advice: str = "the v8 executor's linker does not translate this; "
        "choose --engine node or dukpy",
    ) -> LinkRefused:
        line, column = node.start_point
        return LinkRefused(
            f"{self.name}:{line + 1}:{column + 1}: {what} — {advice}",
            module=self.name,
            line=line + 1,
        )

    def blank(self, node: Node) -> None:
        """Remove a statement, keeping its line breaks (line numbers stay true)."""
        text = self.source[node.start_byte : node.end_byte]
        self.edits.append((node.start_byte, node.end_byte, b"\n" * text.count(b"\n")))

    def factory(self, exports: _Exports) -> str:
        slots = {name: f"__wb_m{i}" for i, name in enumerate(self.requests)}
        getters = {name: f"() => {local}" for name, local in self.local_exports.items()}
        for name, (module, imported, _) in self.reexports.items():
            slot = slots[module]
            getters[name] = f"() => {slot}" if imported is None else f"() => {slot}.{imported}"
        for module in self.star_from:
            for name in _star_names(self, module, exports):
                getters[name] = f"() => {slots[module]}.{name}"
        prologue = ['"use strict";']
        pairs = ", ".join(f"{json.dumps(k)}: {v}" for k, v in getters.items())
        prologue.append(f"__wb_export(__wb_ns, {{{pairs}}});")
        prologue.extend(
            f"const {slot} = __wb_require({json.dumps(name)});" for name, slot in slots.items()
        )
        for imp in self.imports:
            slot = slots[imp.module]
            if imp.namespace is not None:
                prologue.append(f"const {imp.namespace} = {slot};")
            bound = ([("default", imp.default)] if imp.default else []) + list(imp.names)
            if bound:
                fields = ", ".join(f"{json.dumps(k)}: {local}" for k, local in bound)
                prologue.append(f"const {{{fields}}} = {slot};")
        body = self.source
        for start, end, replacement in sorted(self.edits, reverse=True):
            body = body[:start] + replacement + body[end:]
        return (
            f"__wbLinker.define({json.dumps(self.name)}, "
            "function (__wb_ns, __wb_require, __wb_export) {"
            + " ".join(prologue)
            + " "
            + body.decode("utf-8")
            + "\n});"
        )


_Exports = dict[str, dict[str, bool]]
"""Module → its exported names → whether the name's binding can change (let/var)."""


def _star_names(module: _Module, source: str, exports: _Exports) -> Iterator[str]:
    """What ``export * from source`` adds: every name but default, own names, and clashes."""
    own = set(module.local_exports) | set(module.reexports)
    others = [set(exports[m]) for m in module.star_from if m != source]
    for name in exports[source]:
        if name != "default" and name not in own and not any(name in o for o in others):
            yield name


class _Graph:
    """Parses modules depth-first from the entries; ``order`` is dependencies-first."""

    def __init__(self, locate: Locate) -> None:
        self.locate = locate
        self.exports: _Exports = {}
        self.order: list[_Module] = []
        self.entry_of: dict[str, str] = {}

    def visit(self, name: str, importer: str | None, chain: tuple[str, ...]) -> None:
        if name in chain:
            cycle = " → ".join((*chain[chain.index(name) :], name))
            raise LinkRefused(
                f"import cycle {cycle} — the v8 executor's linker links acyclic module "
                "graphs only; choose --engine node or dukpy",
                module=name,
            )
        if name in self.exports:
            return
        path = self.locate(name)
        if path is None:
            where = f" imported from {importer}" if importer else ""
            raise EngineError(
                f"loading {chain[0] if chain else name} failed: Error: "
                f"Cannot find module './{name}'{where}"
            )
        module = _parse(name, path.read_bytes())
        for dep in module.requests:
            self.visit(dep, name, (*chain, name))
        _check_imports(module, self.exports, chain[0] if chain else name)
        self.exports[name] = _export_names(module, self.exports)
        self.order.append(module)
        self.entry_of[name] = chain[0] if chain else name


def _check_imports(module: _Module, exports: _Exports, entry: str) -> None:
    """Named imports and re-exports must exist, and named imports must be constant."""
    wanted: list[tuple[str, str, int, bool]] = []
    for imp in module.imports:
        names = [k for k, _ in imp.names] + (["default"] if imp.default else [])
        wanted.extend((imp.module, name, imp.line, True) for name in names)
    for dep, imported, line in module.reexports.values():
        if imported is not None:
            wanted.append((dep, imported, line, False))
    for dep, name, line, bound_once in wanted:
        if name not in exports[dep]:
            raise EngineError(
                f"loading {entry} failed: SyntaxError: The requested module './{dep}' does "
                f"not provide an export named '{name}' ({module.name}:{line})",
                module=module.name,
            )
        if exports[dep][name] and bound_once:
            raise LinkRefused(
                f"{module.name}:{line}: imports '{name}' from {dep}, a let/var binding — the "
                "v8 executor's linker binds named imports once, which is exact only for "
                "constant bindings; import the namespace (import * as …) or choose "
                "--engine node or dukpy",
                module=module.name,
                line=line,
            )


def _export_names(module: _Module, exports: _Exports) -> dict[str, bool]:
    names = {name: local in module.mutable for name, local in module.local_exports.items()}
    for name, (dep, imported, _) in module.reexports.items():
        names[name] = imported is not None and exports[dep].get(imported, False)
    for dep in module.star_from:
        for name in _star_names(module, dep, exports):
            names[name] = exports[dep][name]
    return names


@lru_cache(maxsize=64)
def _parse(name: str, source: bytes) -> _Module:
    """A module's imports, exports and rewrites (cached: engines restart on the same files)."""
    parser, query = _parser()
    tree = parser.parse(source)
    module = _Module(name, source)
    root = tree.root_node
    if root.has_error:
        # Most often a plain syntax error, which node and dukpy reject too; the
        # grammar may also lag behind a new construct: say both, advise neither.
        raise module.refuse(
            _first_error(root),
            "a syntax error, or syntax newer than the v8 executor's JavaScript grammar",
            "--engine node or dukpy loads the module set in the second case, and names "
            "the error in the first",
        )
    _refuse_unsupported(module, query, root)
    for node in root.named_children:
        if node.type in ("lexical_declaration", "variable_declaration"):
            _note_mutable(module, node)
        elif node.type == "import_statement":
            _read_import(module, node)
        elif node.type == "export_statement":
            _read_export(module, node)
    return module


def _first_error(node: Node) -> Node:
    for child in node.children:
        if child.is_error or child.is_missing:
            return child
        if child.has_error:
            return _first_error(child)
    return node


def _refuse_unsupported(module: _Module, query: Query, root: Node) -> None:
    from tree_sitter import QueryCursor

    for capture, nodes in QueryCursor(query).captures(root).items():
        for node in nodes:
            if capture == "dynamic_import":
                raise module.refuse(node, "dynamic import()")
            if capture == "import_meta":
                raise module.refuse(node, "import.meta")
            if capture == "await" and not _inside_function(node):
                raise module.refuse(node, "top-level await")


def _inside_function(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in _FUNCTION_SCOPES:
            return True
        parent = parent.parent
    return False


def _note_mutable(module: _Module, declaration: Node) -> None:
    kind = declaration.child(0)
    if kind is not None and kind.type in ("let", "var"):
        for name in _declared_names(module, declaration):
            module.mutable.add(name)


def _declared_names(module: _Module, declaration: Node) -> list[str]:
    names = []
    for declarator in declaration.named_children:
        if declarator.type != "variable_declarator":
            continue
        target = declarator.child_by_field_name("name")
        if target is None or target.type != "identifier":
            raise module.refuse(declarator, "a destructuring declaration at module level")
        names.append(_text(target))
    return names


def _request(module: _Module, node: Node) -> str:
    source = node.child_by_field_name("source")
    assert source is not None
    specifier = _string_value(source)
    match = _SPECIFIER.match(specifier)
    if match is None:
        raise module.refuse(source, f"import of {specifier!r} (only ./NAME.js modules link)")
    target = match.group(1)
    if target not in module.requests:
        module.requests.append(target)
    return target


def _read_import(module: _Module, node: Node) -> None:
    if any(c.type == "import_attribute" for c in node.children):
        raise module.refuse(node, "import attributes")
    target = _request(module, node)
    namespace = default = None
    names: list[tuple[str, str]] = []
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    for part in clause.named_children if clause else ():
        if part.type == "identifier":
            default = _text(part)
        elif part.type == "namespace_import":
            namespace = _text(part.named_children[-1])
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type != "import_specifier":
                    continue
                imported = _identifier(module, spec.child_by_field_name("name"))
                alias = spec.child_by_field_name("alias")
                names.append((imported, _identifier(module, alias) if alias else imported))
    line = node.start_point[0] + 1
    module.imports.append(_Import(target, namespace, default, tuple(names), line))
    module.blank(node)


def _read_export(module: _Module, node: Node) -> None:
    declaration = node.child_by_field_name("declaration")
    value = node.child_by_field_name("value")
    is_default = any(c.type == "default" for c in node.children)
    if declaration is not None:
        if declaration.type in _DECLARATIONS:
            name_node = declaration.child_by_field_name("name")
            assert name_node is not None
            local = _text(name_node)
            module.local_exports["default" if is_default else local] = local
        else:  # const / let / var
            _note_mutable(module, declaration)
            for local in _declared_names(module, declaration):
                module.local_exports[local] = local
        # Drop "export" (and "default"): the declaration stays in place.
        module.edits.append((node.start_byte, declaration.start_byte, b""))
        return
    if value is not None:  # export default <expression>
        module.local_exports["default"] = "__wb_default"
        module.edits.append((node.start_byte, value.start_byte, b"const __wb_default = ("))
        tail = module.source[value.end_byte : node.end_byte]
        module.edits.append((value.end_byte, node.end_byte, b");" + b"\n" * tail.count(b"\n")))
        return
    if node.child_by_field_name("source") is not None:
        _read_reexport(module, node)
    else:
        clause = next(c for c in node.named_children if c.type == "export_clause")
        for spec in clause.named_children:
            local = _identifier(module, spec.child_by_field_name("name"))
            alias = spec.child_by_field_name("alias")
            module.local_exports[_identifier(module, alias) if alias else local] = local
    module.blank(node)


def _read_reexport(module: _Module, node: Node) -> None:
    target = _request(module, node)
    clause = next((c for c in node.named_children if c.type == "export_clause"), None)
    star_as = next((c for c in node.named_children if c.type == "namespace_export"), None)
    line = node.start_point[0] + 1
    if star_as is not None:
        module.reexports[_identifier(module, star_as.named_children[-1])] = (target, None, line)
    elif clause is None:
        module.star_from.append(target)
    else:
        for spec in clause.named_children:
            imported = _identifier(module, spec.child_by_field_name("name"))
            alias = spec.child_by_field_name("alias")
            module.reexports[_identifier(module, alias) if alias else imported] = (
                target,
                imported,
                line,
            )


def _identifier(module: _Module, node: Node | None) -> str:
    assert node is not None
    if node.type not in ("identifier", "default"):
        raise module.refuse(node, "a string as an import or export name")
    return _text(node)


def _string_value(node: Node) -> str:
    return "".join(_text(c) for c in node.named_children if c.type == "string_fragment")


def _text(node: Node) -> str:
    assert node.text is not None
    return node.text.decode("utf-8")
