"""JSON Schemas of the tool catalogue (input and output), kept compact on purpose:
``tools/list`` is paid for in every agent's context."""

from __future__ import annotations

from typing import Any

from werkbaum_core.text import MAX_TEXT_CHARS

Schema = dict[str, Any]

STATUS_CODES = ("?", " ", "!", "~", "/", "x", "^", "-")
STATUS_ALIASES = {
    "idea": "?",
    "planned": " ",
    "high-risk": "!",
    "in-progress": "~",
    "demo": "/",
    "done": "x",
    "prod": "^",
    "discarded": "-",
}
SIZES = ("XS", "S", "M", "L", "XL", "XXL")
MAX_OPS = 1000

SOURCE: Schema = {
    "type": "string",
    "minLength": 1,
    "description": "Plan file path, or a shared document's URL, share link or uuid.",
}
BASE: Schema = {
    "type": "object",
    "description": "From your last read or write result, verbatim.",
    "properties": {
        "version": {"type": ["integer", "null"]},
        "checksum": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    },
    "required": ["checksum"],
    "additionalProperties": False,
}
NODE_ID: Schema = {"type": "string", "minLength": 1, "description": "Node id, without '#'."}
WRITE_FLAGS: dict[str, Schema] = {
    "allowWarnings": {"type": "boolean", "description": "Allow new structural warnings."},
    "allowProd": {"type": "boolean", "description": "Allow [^] (only if a human asked)."},
    "dryRun": {"type": "boolean", "description": "Preview: write nothing."},
}


def tool_input(properties: dict[str, Schema], required: list[str], *, write: bool) -> Schema:
    """An object schema that rejects unknown properties; write tools get base and flags."""
    props = {"source": SOURCE}
    if write:
        props["base"] = BASE
    props.update(properties)
    if write:
        props.update(WRITE_FLAGS)
    req = ["source", "base", *required] if write else ["source", *required]
    return {"type": "object", "properties": props, "required": req, "additionalProperties": False}


INSPECT_INPUT: Schema = {
    "type": "object",
    "properties": {
        "source": SOURCE,
        "text": {
            "type": "string",
            "maxLength": MAX_TEXT_CHARS,
            "description": "Plan text to analyse instead of a source.",
        },
        "id": {**NODE_ID, "description": "Only this node's subtree."},
        "include": {
            "type": "array",
            "items": {"enum": ["tree", "warnings", "path"]},
            "uniqueItems": True,
            "description": "Parts to return (default all).",
        },
    },
    "additionalProperties": False,
}

OPS: Schema = {
    "type": "array",
    "maxItems": MAX_OPS,
    "description": "Line ops, 0-based against the base, ascending, non-overlapping.",
    "items": {
        "type": "object",
        "properties": {
            "op": {"enum": ["insert", "replace", "delete"]},
            "index": {"type": "integer", "minimum": 0},
            "count": {"type": "integer", "minimum": 0},
            "lines": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["op", "index"],
        "additionalProperties": False,
    },
}

_BASE_OUT: Schema = {
    "type": "object",
    "properties": {"version": {"type": ["integer", "null"]}, "checksum": {"type": "string"}},
}
_WARNING_OUT: Schema = {
    "type": "object",
    "description": "type, line (if any), type-specific fields, English text, structural.",
    "properties": {
        "type": {"type": "string"},
        "line": {"type": "integer"},
        "text": {"type": "string"},
        "structural": {"type": "boolean"},
    },
    "required": ["type", "text"],
}

READ_OUTPUT: Schema = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "base": _BASE_OUT,
        "lines": {"type": "integer"},
        "mirrorOf": {"type": "string"},
    },
    "required": ["text", "base", "lines"],
}

INSPECT_OUTPUT: Schema = {
    "type": "object",
    "description": (
        "Nodes omit fields at their default (gate 'and', false, empty, null). "
        "effectiveStatus appears only where it differs from status; "
        "assumedSize only where size is missing. Path refs are '#id' or 'L<line>'."
    ),
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "label": {"type": "string"},
                "line": {"type": "integer"},
                "gate": {"enum": ["and", "or", "xor"]},
                "status": {"type": "string"},
                "effectiveStatus": {"type": "string"},
                "size": {"type": "string"},
                "assumedSize": {"type": "string"},
                # Not a recursive $ref: clients validate structuredContent against
                # this schema, and a recursive one costs them ~25 ms per large plan.
                "children": {"type": "array", "description": "child nodes, same shape"},
            },
            "required": ["label", "line"],
        },
    },
    "properties": {
        "base": _BASE_OUT,
        "tree": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        "warnings": {"type": "array", "items": _WARNING_OUT},
        "path": {
            "type": "object",
            "properties": {
                # Node references without per-item schemas: a client validates
                # every item (the Python SDK spent ~2.3 ms per call on the 218
                # refs of werkbaum.werkbaum, 90 % of its whole output check).
                "needed": {"type": "array", "description": "refs of the nodes on the path"},
                "stations": {"type": "array", "description": "refs, in document order"},
                "exact": {"type": "boolean"},
                "assigneeLoads": {"type": "object"},
                "overloadedAssignee": {"type": ["object", "null"]},
            },
        },
    },
}

WRITE_OUTPUT: Schema = {
    "type": "object",
    "description": "warnings: {added[], removed[], remaining (count)} against your base.",
    "properties": {
        "base": _BASE_OUT,
        "lines": {"type": "integer"},
        "ops": {"type": "array"},
        "diff": {"type": "string"},
        "warnings": {"type": "object"},
        "redirectedTo": {"type": "string"},
        "mirror": {"type": "object"},
        "dryRun": {"type": "boolean"},
    },
    "required": ["base", "lines", "ops", "diff", "warnings"],
}
