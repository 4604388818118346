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
VERSION: Schema = {
    # anyOf, not a type array: single-type dialects (Gemini) reject ["integer", "null"].
    "anyOf": [{"type": "integer"}, {"type": "null"}],
    "description": "Document version; null for a file.",
}
BASE: Schema = {
    "type": "object",
    "description": "From your last read or write result, verbatim.",
    "properties": {
        "version": VERSION,
        "checksum": {
            "type": "string",
            "pattern": "^sha256:[0-9a-f]{64}$",
            "description": "Checksum of the text you read.",
        },
    },
    "required": ["checksum"],
    "additionalProperties": False,
}
BASE_OR_NEW: Schema = {
    "anyOf": [{k: v for k, v in BASE.items() if k != "description"}, {"type": "null"}],
    "description": "From your last read or write result, verbatim; null: create a new plan file.",
}
MAX_ID_CHARS = 1000
"""An id or ref argument (ids in real plans are a few dozen characters); the facade's
"did you mean" compares ids up to this length (facade.js ``MAX_ID_CHARS``)."""
NODE_ID: Schema = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_ID_CHARS,
    "description": "Node id ('#' optional), or L<line>: a ref from inspect.",
}
WRITE_FLAGS: dict[str, Schema] = {
    "allowWarnings": {"type": "boolean", "description": "Allow new structural warnings."},
    "allowProd": {"type": "boolean", "description": "Allow [^] (only if a human asked)."},
    "dryRun": {"type": "boolean", "description": "Preview: write nothing."},
}
MAX_WARNINGS = 1000
"""Warnings listed per list of an answer (facade.js ``MAX_WARNINGS``); the rest are
counted in ``{listed, total}``."""
MAX_ANSWER_CHARS = 24_000_000
"""Characters of one inspect answer as sent (its JSON twice: structured content and
text): 12 times the text limit. A typical plan's JSON is ~4 times its text, so ~9 times
as sent; only a pathological one — 360,000 one-letter nodes — is refused."""
MAX_BLOCK_LINES = 1000
"""Lines of one ``add_node`` block (as many as ops per call)."""
MAX_FIND_CHARS = 200
"""A ``find`` is a few words."""


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
            "description": (
                f"Plan text to analyse instead of a source (at most {MAX_TEXT_CHARS:,} chars)."
            ),
        },
        "id": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_ID_CHARS,
            "description": "Only this node's subtree: its id ('#' optional) or L<line>.",
        },
        "include": {
            "type": "array",
            "items": {"enum": ["tree", "warnings", "path", "stations"]},
            "uniqueItems": True,
            "maxItems": 4,
            "description": (
                "Parts: tree, warnings, path, stations (what is next, as node summaries); "
                "default: tree, warnings and path. With find, depth or hideDone: only "
                "their answer."
            ),
        },
        "find": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_FIND_CHARS,
            "description": (
                "Words a node's label, id or owners must all contain (any case): "
                "matches (at most 50) and their total."
            ),
        },
        "depth": {
            "type": "integer",
            "minimum": 0,
            "description": (
                "Tree levels below the roots (or id); a node cut there carries "
                "descendants: inspect its id for them."
            ),
        },
        "hideDone": {
            "type": "boolean",
            "description": "Leave out subtrees that are done, in production or discarded.",
        },
        "hideDesc": {
            "type": "boolean",
            "description": "Leave out node descriptions (desc), most of a tree's characters.",
        },
    },
    "additionalProperties": False,
}

LIST_PAGE = 100
"""Plan files per ``werkbaum_list`` page."""
LIST_INPUT: Schema = {
    "type": "object",
    "properties": {"cursor": {"type": "string", "description": "nextCursor of the previous page."}},
    "additionalProperties": False,
}

OPS: Schema = {
    "type": "array",
    "maxItems": MAX_OPS,
    "description": "Line ops, 0-based against the base, ascending, non-overlapping.",
    "items": {
        "type": "object",
        "properties": {
            "op": {"enum": ["insert", "replace", "delete"], "description": "What to do."},
            "index": {"type": "integer", "minimum": 0, "description": "First line (0-based)."},
            "count": {
                "type": "integer",
                "minimum": 0,
                "description": "Lines replaced or deleted.",
            },
            "lines": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Lines to insert or replace with.",
            },
        },
        "required": ["op", "index"],
        "additionalProperties": False,
    },
}

_BASE_OUT: Schema = {"type": "object", "description": "{version, checksum}"}
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
    # No base for the guide: it is not written to.
    "required": ["text", "lines"],
}

LIST_OUTPUT: Schema = {
    "type": "object",
    "properties": {
        "plans": {"type": "array", "description": "{source, lines}"},
        "nextCursor": {"type": "string"},
    },
    "required": ["plans"],
}

INSPECT_OUTPUT: Schema = {
    "type": "object",
    "description": (
        "Fields at their default are left out; effectiveStatus only where it differs "
        "from status, assumedSize only where size is missing. Refs: '#id' or 'L<line>'."
    ),
    "$defs": {
        "summary": {
            "type": "object",
            "description": (
                "ref, line, label, status, effectiveStatus, size or assumedSize, assignees"
            ),
            "required": ["ref", "line", "label"],
        },
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
                "descendants": {"type": "integer", "description": "nodes cut below it"},
            },
            "required": ["label", "line"],
        },
        "list": {
            "type": "object",
            "description": "stations: {exact, nodes}; matches: {total, nodes}",
            "properties": {"nodes": {"type": "array", "items": {"$ref": "#/$defs/summary"}}},
        },
    },
    "properties": {
        "base": _BASE_OUT,
        "tree": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        "cut": {"type": "object", "description": "{depth, nodes}: where the tree stops"},
        "hidden": {"type": "object", "description": "{subtrees, nodes} left out by hideDone"},
        "warnings": {"type": "array", "items": _WARNING_OUT},
        "warningsCut": {"type": "object", "description": "{listed, total, unlisted}"},
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
                "overloadedAssignee": {"type": "object"},
            },
        },
        "stations": {"$ref": "#/$defs/list"},
        "matches": {"$ref": "#/$defs/list"},
    },
}

WRITE_OUTPUT: Schema = {
    "type": "object",
    "description": (
        "diff: your change; warnings: {added[], removed[], remaining, addedCut?, "
        "removedCut?} vs your base; if any: merged {diff} (co-edits), "
        "redirectedTo, mirror, findings, dryRun."
    ),
    # Only the fields every result has: each write tool repeats this schema, and
    # tools/list is paid for in every agent's context.
    "properties": {
        "base": _BASE_OUT,
        "lines": {"type": "integer"},
        "ops": {"type": "array"},
        "diff": {"type": "string"},
        "warnings": {"type": "object"},
    },
    # base: absent only from a dry-run create (nothing to write against yet).
    "required": ["lines", "ops", "diff", "warnings"],
}
