"""One line per input-schema problem, with the reason before any quoted value.

jsonschema words a problem as the offending value's ``repr`` followed by the
reason (``[{'op': …}, …] is too long``). The value may be a thousand ops or a
whole plan text, and a problem is cut to :data:`MAX_PROBLEM_CHARS`, so the
reason was cut off. Here a bound says the field, its size and the limit first
(in the words of a ``too_large`` error), and any other problem quotes at most
:data:`MAX_QUOTED_CHARS` of the value.
"""

from __future__ import annotations

import json
from collections.abc import Sized
from typing import Any

import jsonschema
import jsonschema.protocols

from werkbaum_core.display import shortened

MAX_PROBLEM_CHARS = 300
"""Longest schema problem reported (a key or an enum list may still be long)."""
MAX_QUOTED_CHARS = 40
"""Longest quotation of the offending value in a problem."""

_UNITS: dict[str, tuple[str, type[Sized]]] = {
    "maxLength": ("character", str),
    "minLength": ("character", str),
    "maxItems": ("item", list),
    "minItems": ("item", list),
    "maxProperties": ("property", dict),
    "minProperties": ("property", dict),
}
"""The size bounds: what they count, in values of which type."""
_PLURAL = {"character": "characters", "item": "items", "property": "properties"}


def problems(validator: jsonschema.protocols.Validator, arguments: Any) -> list[str]:
    """Every problem of ``arguments``, in argument order; the size bounds first.

    jsonschema evaluates every keyword of a value, also of an array far over its
    ``maxItems`` (each item against ``items``, and ``uniqueItems`` pair by pair:
    quadratic for objects — a 77 KB ``include`` of objects took 68 s). So the
    bounds are checked first, top-down, without entering what is over them; only
    arguments within every bound are validated in full.
    """
    over = _over_bounds(validator.schema, arguments)
    if over:
        return over
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return [problem(e) for e in errors]


def _over_bounds(schema: Any, arguments: Any) -> list[str]:
    """``FIELD: N UNITS; the limit is M UNITS`` for each value over a ``max*`` bound,
    found by following ``properties`` and ``items`` (iteratively: values nest deep)."""
    found: list[str] = []
    stack: list[tuple[Any, Any, tuple[str, ...]]] = [(schema, arguments, ())]
    while stack:
        part, value, path = stack.pop()
        if not isinstance(part, dict):
            continue
        for keyword in ("maxLength", "maxItems", "maxProperties"):
            unit, kind = _UNITS[keyword]
            limit = part.get(keyword)
            if isinstance(value, kind) and isinstance(limit, int) and len(value) > limit:
                where = "/".join(path) or "(arguments)"
                found.append(f"{where}: {_bound_reason(value, unit, 'the limit', limit)}")
                break
        else:
            if isinstance(value, dict):
                for key, inner in part.get("properties", {}).items():
                    if key in value:
                        stack.append((inner, value[key], (*path, key)))
            elif isinstance(value, list) and "items" in part:
                stack.extend((part["items"], item, (*path, str(i))) for i, item in enumerate(value))
    return sorted(found)


def problem(error: jsonschema.ValidationError) -> str:
    """``FIELD: REASON`` for one validation error (``(arguments)`` for the whole call)."""
    where = "/".join(map(str, error.absolute_path)) or "(arguments)"
    text = f"{where}: {_size_bound(error) or _shortened(error)}"
    return shortened(text, MAX_PROBLEM_CHARS)


def quoted(value: Any) -> str:
    """The value's ``repr``, cut to :data:`MAX_QUOTED_CHARS`."""
    return shortened(repr(value), MAX_QUOTED_CHARS)


def _count(number: int, unit: str) -> str:
    return f"{number:,} {unit if number == 1 else _PLURAL[unit]}"


def _size_bound(error: jsonschema.ValidationError) -> str | None:
    """``N UNITS; the limit is M UNITS`` (or ``the minimum is``), None for other problems."""
    counted = _UNITS.get(str(error.validator))
    if counted is None:
        return None
    unit, kind = counted
    value, limit = error.instance, error.validator_value
    if not isinstance(value, kind) or not isinstance(limit, int):
        return None
    bound = "the limit" if str(error.validator).startswith("max") else "the minimum"
    return _bound_reason(value, unit, bound, limit)


def _bound_reason(value: Sized, unit: str, bound: str, limit: int) -> str:
    reason = f"{_count(len(value), unit)}; {bound} is {_count(limit, unit)}"
    if isinstance(value, str) and value:
        reason += f" (starts {quoted(value[:MAX_QUOTED_CHARS])})"
    return reason


def _shortened(error: jsonschema.ValidationError) -> str:
    """jsonschema's message with its leading quotation of the value shortened; the
    allowed values of an ``enum`` as JSON (``null``, not Python's ``None``)."""
    if error.validator == "enum" and isinstance(error.validator_value, list):
        allowed = json.dumps(error.validator_value, ensure_ascii=False)
        return f"{quoted(error.instance)} is not one of {allowed}"
    if error.validator == "type" and error.validator_value == "array":
        # A lone value where a list belongs (include: "stations"): the list it meant.
        meant = json.dumps([error.instance], ensure_ascii=False)
        told = f"{quoted(error.instance)} is not a list"
        return f"{told}; pass a list, e.g. {meant}" if len(meant) <= MAX_QUOTED_CHARS else told
    full = repr(error.instance)
    if len(full) > MAX_QUOTED_CHARS and error.message.startswith(full):
        return quoted(error.instance) + error.message[len(full) :]
    return error.message
