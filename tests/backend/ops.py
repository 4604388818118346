"""Line operations for the stand-in backend: the one place that knows who computes them.

documents-api §3.4 requires the backend's diff, conflict rule and rebase to give
*identical* results to the project's ``live.js`` (``opsSinceBase`` values and
409 decisions depend on the LCS tie-break).  So the backend asks the project's
engine (``live.js`` on an executor) for ``computeOps``/``applyOps``/``rebaseOps``
whenever that engine loads, and otherwise falls back to :class:`PythonLineOps`,
a direct transcription of §3 kept for development and for cross-checking.

Request validation that decides the HTTP status (400 for a missing ``count``,
422 for an op outside the document, §2.6) stays in Python, in
:func:`validate_ops`, so the status never depends on an engine's error text.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from werkbaum_core import checksum as core_checksum

log = logging.getLogger(__name__)

OpKind = Literal["insert", "delete", "replace"]
OP_KINDS: tuple[OpKind, ...] = ("insert", "delete", "replace")

MAX_LCS_CELLS = 1_000_000
"""Above ``len(a) * len(b)`` cells the diff is one replace (§3.4 step 4)."""


class InvalidOps(ValueError):
    """The ops cannot be applied to the base (§3.3); the server answers 422."""


# ---------------------------------------------------------------------------
# §3.1 text <-> lines, §4 checksum


def normalize(text: str) -> str:
    """CRLF, then any remaining CR, become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def lines(text: str) -> list[str]:
    """Split the normalized text on LF; ``"a\\n"`` gives ``["a", ""]``, ``""`` gives ``[""]``."""
    return normalize(text).split("\n")


def text(ls: Sequence[str]) -> str:
    """Join lines with LF (``text(lines(t)) == normalize(t)``)."""
    return "\n".join(ls)


def checksum(t: str) -> str:
    """``sha256:`` + lowercase hex over UTF-8 of ``normalize(t)`` — the project's own function."""
    return core_checksum(t)


# ---------------------------------------------------------------------------
# §3.2 the operation value


@dataclass(frozen=True)
class LineOp:
    """One line operation against the base; fields the kind ignores are kept as sent."""

    op: OpKind
    index: int
    count: int | None = None
    lines: tuple[str, ...] | None = None

    @property
    def removed(self) -> int:
        """Base lines removed: 0 for an insert whatever its count says."""
        return 0 if self.op == "insert" else (self.count or 0)

    @property
    def inserted(self) -> tuple[str, ...]:
        """Lines put in: none for a delete; a missing ``lines`` means none."""
        return () if self.op == "delete" or self.lines is None else self.lines

    @property
    def end(self) -> int:
        return self.index + self.removed

    @property
    def line_delta(self) -> int:
        return len(self.inserted) - self.removed

    def shifted(self, delta: int) -> LineOp:
        return LineOp(self.op, self.index + delta, self.count, self.lines)

    def to_json(self) -> dict[str, Any]:
        """The server's serialization (§2.12): fields not used by the kind are explicit nulls."""
        if self.op == "insert":
            return {
                "op": "insert",
                "index": self.index,
                "count": None,
                "lines": list(self.inserted),
            }
        if self.op == "delete":
            return {"op": "delete", "index": self.index, "count": self.count, "lines": None}
        return {
            "op": "replace",
            "index": self.index,
            "count": self.count,
            "lines": list(self.inserted),
        }

    def to_engine(self) -> dict[str, Any]:
        """The shape ``live.js`` takes: only the fields the kind uses, as sent."""
        out: dict[str, Any] = {"op": self.op, "index": self.index}
        if self.count is not None:
            out["count"] = self.count
        if self.lines is not None:
            out["lines"] = list(self.lines)
        return out

    @classmethod
    def from_engine(cls, raw: Any) -> LineOp:
        """An op as the engine returns it (already well-formed; no HTTP validation here)."""
        if not isinstance(raw, dict) or raw.get("op") not in OP_KINDS:
            raise ValueError(f"engine returned a malformed op: {raw!r}")
        raw_lines = raw.get("lines")
        return cls(
            op=raw["op"],
            index=int(raw["index"]),
            count=None if raw.get("count") is None else int(raw["count"]),
            lines=None if raw_lines is None else tuple(str(x) for x in raw_lines),
        )


def ops_to_json(ops: Sequence[LineOp]) -> list[dict[str, Any]]:
    return [op.to_json() for op in ops]


# ---------------------------------------------------------------------------
# §3.3 validation (server-side, decides the 422)


def validate_ops(size: int, ops: Sequence[LineOp]) -> None:
    """Raise :class:`InvalidOps` unless ``ops`` is applicable to ``size`` base lines.

    Ascending, non-overlapping, inside the base; two inserts at one index are
    fine, an insert may precede a range starting at its index but not follow it.
    """
    prev_end = 0
    for k, op in enumerate(ops):
        if op.removed < 0:
            raise InvalidOps(f"Operation {k}: negative Anzahl {op.removed}")
        if op.index < 0 or op.index > size:
            raise InvalidOps(
                f"Operation {k}: Index {op.index} außerhalb des Dokuments ({size} Zeilen)"
            )
        if op.end > size:
            raise InvalidOps(
                f"Operation {k}: Bereich bis {op.end} außerhalb des Dokuments ({size} Zeilen)"
            )
        if op.index < prev_end:
            raise InvalidOps(
                f"Operation {k}: nicht aufsteigend oder überlappend (Index {op.index})"
            )
        prev_end = op.end


# ---------------------------------------------------------------------------
# The implementations


class LineOps(Protocol):
    """What the store needs; both implementations must agree exactly."""

    name: str

    def compute_ops(self, a: Sequence[str], b: Sequence[str]) -> list[LineOp]: ...

    def apply_ops(self, base: Sequence[str], ops: Sequence[LineOp]) -> list[str]: ...

    def rebase_ops(
        self, mine: Sequence[LineOp], theirs: Sequence[LineOp]
    ) -> list[LineOp] | None: ...


def ops_conflict(x: LineOp, y: LineOp) -> bool:
    """§3.5: inserts are points, ranges half-open; an insert conflicts only strictly inside."""
    x_point = x.op == "insert"
    y_point = y.op == "insert"
    if x_point and y_point:
        return False
    if x_point:
        return y.index < x.index < y.end
    if y_point:
        return x.index < y.index < x.end
    return x.index < y.end and y.index < x.end


class PythonLineOps:
    """A transcription of documents-api §3 (and of ``live.js``), tie-break included."""

    name = "python"

    def compute_ops(self, a: Sequence[str], b: Sequence[str]) -> list[LineOp]:
        limit = min(len(a), len(b))
        head = 0
        while head < limit and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
            tail += 1
        xa = list(a[head : len(a) - tail])
        xb = list(b[head : len(b) - tail])
        if not xa and not xb:
            return []
        if not xa:
            return [LineOp("insert", head, None, tuple(xb))]
        if not xb:
            return [LineOp("delete", head, len(xa), None)]
        if len(xa) * len(xb) > MAX_LCS_CELLS:
            return [LineOp("replace", head, len(xa), tuple(xb))]
        return _walk(xa, xb, _suffix_lcs(xa, xb), head)

    def apply_ops(self, base: Sequence[str], ops: Sequence[LineOp]) -> list[str]:
        validate_ops(len(base), ops)
        out: list[str] = []
        cursor = 0
        for op in ops:
            out.extend(base[cursor : op.index])
            out.extend(op.inserted)
            cursor = op.end
        out.extend(base[cursor:])
        return out

    def rebase_ops(self, mine: Sequence[LineOp], theirs: Sequence[LineOp]) -> list[LineOp] | None:
        if not mine or not theirs:
            return list(mine)
        if any(ops_conflict(m, t) for m in mine for t in theirs):
            return None
        # A foreign op ending at or before mine is "before" it: a foreign insert at
        # the same index stays above mine, a foreign range starting there does not.
        return [m.shifted(sum(t.line_delta for t in theirs if t.end <= m.index)) for m in mine]


def _suffix_lcs(a: list[str], b: list[str]) -> list[list[int]]:
    """``L[i][j]`` = LCS length of ``a[i:]`` and ``b[j:]``; row n and column m are 0."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below, ai = table[i], table[i + 1], a[i]
        for j in range(m - 1, -1, -1):
            if ai == b[j]:
                row[j] = below[j + 1] + 1
            else:
                right, down = row[j + 1], below[j]
                row[j] = right if right >= down else down
    return table


def _walk(a: list[str], b: list[str], table: list[list[int]], head: int) -> list[LineOp]:
    """§3.4 step 6: a hunk runs from a mismatch to the next matching pair; ties insert."""
    n, m = len(a), len(b)
    ops: list[LineOp] = []
    i = j = 0
    while i < n or j < m:
        if i < n and j < m and a[i] == b[j]:
            i += 1
            j += 1
            continue
        start = i
        ins: list[str] = []
        while (i < n or j < m) and not (i < n and j < m and a[i] == b[j]):
            if j < m and (i == n or table[i][j + 1] >= table[i + 1][j]):
                ins.append(b[j])
                j += 1
            else:
                i += 1
        removed = i - start
        if removed and ins:
            ops.append(LineOp("replace", head + start, removed, tuple(ins)))
        elif removed:
            ops.append(LineOp("delete", head + start, removed, None))
        else:
            ops.append(LineOp("insert", head + start, None, tuple(ins)))
    return ops


class EngineLineOps:
    """``live.js`` through the project's engine (``werkbaum_core.engine.Engine``).

    The engine serialises calls behind its own lock; the store calls it while
    holding the store lock, which is safe because the engine never calls back.
    """

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.name = f"engine:{getattr(engine, 'kind', '?')}"

    def _call(self, fn: str, *args: Any) -> Any:
        return self._engine.transform("live", fn, *args)

    def compute_ops(self, a: Sequence[str], b: Sequence[str]) -> list[LineOp]:
        return [LineOp.from_engine(op) for op in self._call("computeOps", list(a), list(b))]

    def apply_ops(self, base: Sequence[str], ops: Sequence[LineOp]) -> list[str]:
        from werkbaum_core.errors import EngineError, InvalidArgument

        try:
            result = self._call("applyOps", list(base), [op.to_engine() for op in ops])
        except InvalidArgument as exc:
            raise InvalidOps(exc.message) from exc
        except EngineError as exc:
            if "invalid_argument" in exc.message:
                raise InvalidOps(exc.message) from exc
            raise
        return [str(x) for x in result]

    def rebase_ops(self, mine: Sequence[LineOp], theirs: Sequence[LineOp]) -> list[LineOp] | None:
        result = self._call(
            "rebaseOps", [op.to_engine() for op in mine], [op.to_engine() for op in theirs]
        )
        return None if result is None else [LineOp.from_engine(op) for op in result]


_cache: dict[str, LineOps] = {}
_cache_lock = threading.Lock()


def _load_engine(kind: str | None) -> LineOps:
    from werkbaum_core.engine import Engine

    engine = Engine.create(kind)
    impl = EngineLineOps(engine)
    # A smoke call: a module set that loads but lacks live.js must not be chosen.
    if impl.compute_ops(["a", "b"], ["a", "B"]) != [LineOp("replace", 1, 1, ("B",))]:
        raise RuntimeError("engine's computeOps disagrees with documents-api §3.4")
    return impl


OPS_MODES = ("auto", "python", "engine", "dukpy", "node")
"""``engine`` = the engine's default executor (``WERKBAUM_ENGINE``, else dukpy)."""


def line_ops(mode: str = "auto") -> LineOps:
    """The implementation for ``mode`` (one of :data:`OPS_MODES`), created once per process.

    ``auto`` prefers the engine and falls back to Python with a logged reason,
    so the backend keeps working while the engine is being built; the other
    engine modes fail loudly instead.
    """
    with _cache_lock:
        if mode in _cache:
            return _cache[mode]
        impl: LineOps
        if mode == "python":
            impl = PythonLineOps()
        elif mode == "auto":
            try:
                impl = _load_engine(None)
            except Exception as exc:  # any failure to load means: use the transcription
                log.warning("line ops: engine unavailable (%s); using the Python §3 code", exc)
                impl = PythonLineOps()
        elif mode in OPS_MODES:
            impl = _load_engine(None if mode == "engine" else mode)
        else:
            raise ValueError(f"unknown line-ops mode {mode!r}; use one of {', '.join(OPS_MODES)}")
        _cache[mode] = impl
        return impl
