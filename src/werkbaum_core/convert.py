"""JSON ⇄ attrs for the analysis, with the exact field names and omissions of spec §5.1."""

from __future__ import annotations

import re
from typing import Any

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from werkbaum_core.model import (
    Analysis,
    AssigneeLoads,
    Cut,
    Hidden,
    Matches,
    Node,
    Number,
    Overload,
    Path,
    Stations,
    Summary,
    Unlisted,
    Warning,
    WarningsCut,
)

_WARNING_CORE = ("type", "line", "text", "structural")


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


_WIRE_NAMES = {"path_ref": "ref"}
"""Fields whose JSON name is not their camelCase (``Node.ref`` is the property that
falls back to ``#id`` / ``L<line>``)."""


def _wire(name: str) -> str:
    return _WIRE_NAMES.get(name) or _camel(name)


def _renames(cls: type) -> dict[str, Any]:
    import attrs

    return {
        f.name: override(rename=_wire(f.name)) for f in attrs.fields(cls) if _wire(f.name) != f.name
    }


def _structure_warning(data: dict[str, Any], _: type) -> Warning:
    fields = {k: v for k, v in data.items() if k not in _WARNING_CORE}
    return Warning(
        type=data["type"],
        text=data.get("text", ""),
        structural=bool(data.get("structural", False)),
        line=data.get("line"),
        fields=fields,
    )


def _unstructure_warning(warning: Warning) -> dict[str, Any]:
    out: dict[str, Any] = {"type": warning.type}
    if warning.line is not None:
        out["line"] = warning.line
    out.update(warning.fields)
    out["text"] = warning.text
    out["structural"] = warning.structural
    return out


def make_converter() -> cattrs.Converter:
    """A converter whose ``unstructure(structure(json)) == json`` for facade output."""
    converter = cattrs.Converter()
    # Numbers pass through untouched, so an integer load stays ``4`` and not ``4.0``.
    converter.register_structure_hook(Number, lambda value, _: value)
    converter.register_structure_hook(Warning, _structure_warning)
    converter.register_unstructure_hook(Warning, _unstructure_warning)

    # Nodes and summaries leave out every field at its default (spec §5.1).
    for lean in (Node, Summary):
        renames = _renames(lean)
        converter.register_structure_hook(lean, make_dict_structure_fn(lean, converter, **renames))
        converter.register_unstructure_hook(
            lean,
            make_dict_unstructure_fn(lean, converter, _cattrs_omit_if_default=True, **renames),
        )
    # Parts are generated after the types they contain: cattrs binds nested hooks then.
    for cls in (AssigneeLoads, Overload, Stations, Matches, Cut, Hidden, Unlisted, WarningsCut):
        renames = _renames(cls)
        converter.register_structure_hook(cls, make_dict_structure_fn(cls, converter, **renames))
        converter.register_unstructure_hook(
            cls, make_dict_unstructure_fn(cls, converter, **renames)
        )
    # The path always carries its lists and loads; only a missing overload is left out.
    path_fields = {
        **_renames(Path),
        "overloaded_assignee": override(rename="overloadedAssignee", omit_if_default=True),
    }
    converter.register_structure_hook(Path, make_dict_structure_fn(Path, converter, **path_fields))
    converter.register_unstructure_hook(
        Path, make_dict_unstructure_fn(Path, converter, **path_fields)
    )
    # The analysis under the facade's part names (``warningsCut``), after its parts; a part
    # not asked for (None) is left out, as the facade leaves it out.
    parts = _renames(Analysis)
    converter.register_structure_hook(
        Analysis, make_dict_structure_fn(Analysis, converter, **parts)
    )
    converter.register_unstructure_hook(
        Analysis,
        make_dict_unstructure_fn(Analysis, converter, _cattrs_omit_if_default=True, **parts),
    )
    return converter


converter = make_converter()
