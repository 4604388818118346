"""Request bodies: JSON → typed requests, or a 400 problem (documents-api §2.12).

This is the stand-in's version of upstream's schema validation and op mapping
(§5.2 step 1), kept apart from the store so that "400 for a malformed body"
is decided before any document is looked at — the order §5.2 prescribes.

Types are checked strictly (a string is never read as a number); lengths are
counted in UTF-16 code units, as Java's bean validation counts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.backend.ops import OP_KINDS, LineOp
from tests.backend.problems import bad_request

INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
TITLE_MAX = 255
ID_MAX = 64


def utf16_len(s: str) -> int:
    """Length as Java counts it (a character outside the BMP counts twice)."""
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(raw: bytes) -> Any:
    """Strict JSON (no NaN/Infinity) or a 400; an empty body reads as ``None``."""
    if not raw.strip():
        return None
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad_request(f"Der Anfragetext ist kein gültiges JSON: {exc}") from exc


def _object(body: Any) -> dict[str, Any]:
    if body is None:
        raise bad_request("Der Anfragetext fehlt.")
    if not isinstance(body, dict):
        raise bad_request("Der Anfragetext muss ein JSON-Objekt sein.")
    return body


def _string(obj: dict[str, Any], key: str, *, required: bool, max_len: int | None = None) -> Any:
    value = obj.get(key)
    if value is None:
        if required:
            raise bad_request(f"Feld '{key}' fehlt.")
        return None
    if not isinstance(value, str):
        raise bad_request(f"Feld '{key}' muss ein Text sein.")
    if max_len is not None and utf16_len(value) > max_len:
        raise bad_request(f"Feld '{key}' ist länger als {max_len} Zeichen.")
    return value


def _int(obj: dict[str, Any], key: str, *, required: bool, bits: int = 64) -> Any:
    value = obj.get(key)
    if value is None:
        if required:
            raise bad_request(f"Feld '{key}' fehlt.")
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_request(f"Feld '{key}' muss eine ganze Zahl sein.")
    low, high = (-(2**31), INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
    if not low <= value <= high:
        raise bad_request(f"Feld '{key}' liegt außerhalb des Zahlenbereichs.")
    return value


def _title(obj: dict[str, Any]) -> str:
    title: str = _string(obj, "title", required=True, max_len=TITLE_MAX)
    if utf16_len(title) < 1:
        raise bad_request("Feld 'title' darf nicht leer sein.")
    return title


@dataclass(frozen=True)
class CreateRequest:
    title: str
    content: str

    @classmethod
    def parse(cls, body: Any) -> CreateRequest:
        obj = _object(body)
        return cls(title=_title(obj), content=_string(obj, "content", required=True))


@dataclass(frozen=True)
class UpdateRequest:
    title: str
    content: str
    expected_version: int | None
    """Accepted and ignored, as upstream does (§2.5)."""

    @classmethod
    def parse(cls, body: Any) -> UpdateRequest:
        obj = _object(body)
        return cls(
            title=_title(obj),
            content=_string(obj, "content", required=True),
            expected_version=_int(obj, "expectedVersion", required=False),
        )


@dataclass(frozen=True)
class TitlePatchRequest:
    title: str
    """As sent; the store trims it (§2.7)."""
    expected_version: int

    @classmethod
    def parse(cls, body: Any) -> TitlePatchRequest:
        obj = _object(body)
        return cls(title=_title(obj), expected_version=_int(obj, "expectedVersion", required=True))


@dataclass(frozen=True)
class RestoreRequest:
    version: int | None

    @classmethod
    def parse(cls, body: Any) -> RestoreRequest:
        """No body, an empty body, ``{}`` and ``{"version": null}`` all mean "no version"."""
        if body is None:
            return cls(version=None)
        return cls(version=_int(_object(body), "version", required=False))


def _op(raw: Any, k: int) -> LineOp:
    """One ``LineOperation``; delete/replace without ``count`` is a 400 (§3.2), never 0."""
    if not isinstance(raw, dict):
        raise bad_request(f"Operation {k} muss ein JSON-Objekt sein.")
    kind = raw.get("op")
    if kind not in OP_KINDS:
        raise bad_request(f"Operation {k}: 'op' muss replace, insert oder delete sein.")
    index = _int(raw, "index", required=True, bits=32)
    count = _int(raw, "count", required=False, bits=32)
    if kind != "insert" and count is None:
        raise bad_request(f"Operation {k} ({kind}) braucht 'count'.")
    raw_lines = raw.get("lines")
    if raw_lines is not None and (
        not isinstance(raw_lines, list) or not all(isinstance(x, str) for x in raw_lines)
    ):
        raise bad_request(f"Operation {k}: 'lines' muss eine Liste von Texten sein.")
    return LineOp(
        op=kind,
        index=index,
        count=count,
        lines=None if raw_lines is None else tuple(raw_lines),
    )


@dataclass(frozen=True)
class ContentPatchRequest:
    base_version: int
    checksum: str
    client_id: str
    seq: int
    ops: tuple[LineOp, ...]
    display_name: str | None
    milestone: bool

    @classmethod
    def parse(cls, body: Any) -> ContentPatchRequest:
        obj = _object(body)
        raw_ops = obj.get("ops")
        if raw_ops is None:
            raise bad_request("Feld 'ops' fehlt.")
        if not isinstance(raw_ops, list):
            raise bad_request("Feld 'ops' muss eine Liste sein.")
        milestone = obj.get("milestone")
        if milestone is not None and not isinstance(milestone, bool):
            raise bad_request("Feld 'milestone' muss true oder false sein.")
        return cls(
            base_version=_int(obj, "baseVersion", required=True),
            checksum=_string(obj, "checksum", required=True),
            client_id=_string(obj, "clientId", required=True, max_len=ID_MAX),
            seq=_int(obj, "seq", required=True),
            ops=tuple(_op(raw, k) for k, raw in enumerate(raw_ops)),
            display_name=_string(obj, "displayName", required=False, max_len=ID_MAX),
            milestone=bool(milestone),
        )
