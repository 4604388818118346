"""The tool reference in Markdown, generated from the catalogue.

``python -m werkbaum_core.rules.reference > docs/tools.md`` regenerates it; a
test fails when the checked-in file is not current.
"""

from __future__ import annotations

import json
from typing import Any

from werkbaum_core.rules.catalogue import CATALOGUE, ToolSpec

FLAGS = ("allowWarnings", "allowProd", "dryRun")


def _type_of(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join("null" if v is None else f"`{json.dumps(v)}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " \\| ".join(_type_of(branch) for branch in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type_of(schema.get('items', {}))}"
    if isinstance(kind, list):
        return " \\| ".join(kind)
    return str(kind)


_BOUNDS = (
    ("maxLength", "at most {:,} characters"),
    ("maxItems", "at most {:,} items"),
    ("minimum", "≥ {:,}"),
    ("maximum", "≤ {:,}"),
)
"""The schema bounds the reference states (the lower bound 1 of a non-empty value aside)."""


def _with_bounds(schema: dict[str, Any]) -> str:
    """The parameter's type and the bounds the input schema checks (``ops`` at most 1,000)."""
    bounds = [words.format(schema[key]) for key, words in _BOUNDS if key in schema]
    return ", ".join([_type_of(schema), *bounds])


def _tool_section(spec: ToolSpec) -> list[str]:
    props: dict[str, Any] = spec.input_schema["properties"]
    required = set(spec.input_schema.get("required", ()))
    hints = ", ".join(
        f"{k}: {str(v).lower()}" for k, v in spec.annotations().items() if k != "title"
    )
    out = [
        f"### `{spec.name}` — {spec.title}",
        "",
        spec.description,
        "",
        f"Annotations: {hints}.",
        "",
    ]
    if spec.files_only:
        out += ["Offered by `werkbaum-mcp` (stdio) only: the HTTP server has no plan files.", ""]
    out += ["| parameter | type | required | description |", "|---|---|---|---|"]
    for name, schema in props.items():
        if name in FLAGS:
            continue
        needed = "yes" if name in required else "no"
        note = schema.get("description", "")
        out.append(f"| `{name}` | {_with_bounds(schema)} | {needed} | {note} |")
    if not spec.read_only:
        out.append(
            "| `allowWarnings`, `allowProd`, `dryRun` | boolean | no | guard rails and preview |"
        )
    return [*out, ""]


def markdown() -> str:
    lines = [
        "# Tool reference",
        "",
        "Generated from the catalogue (`python -m werkbaum_core.rules.reference > docs/tools.md`);",
        "a test keeps it current. Every input schema rejects unknown properties. Results carry",
        "the same JSON in `structuredContent` and in the text content; tool errors are text",
        '`{"error": {"code", "message", …}}` with `isError: true`.',
        "",
    ]
    for spec in CATALOGUE:
        lines += _tool_section(spec)
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
