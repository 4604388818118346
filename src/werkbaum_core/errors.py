"""Typed errors of the core.

Every failure an agent can recover from is one of these, with a stable
``code`` that the adapters put into the tool error (spec §13), so that a model
reads ``{"error": {"code": ...}}`` and knows what to do next:

====================  ======================  ==================================================
class                 code                    the agent's next step
====================  ======================  ==================================================
``Conflict``          ``conflict``            the plan changed since your base: take
                                              ``current.base`` (and its diff), redo the change
``Blocked``           ``blocked``             the write would break the notation or claim
                                              ``[^]``: fix the text, or pass the named flag
``NotFound``          ``not_found``           no such node or source: check ``didYouMean``
``InvalidArgument``   ``invalid_argument``    the call is wrong as given: read the message
``ForbiddenSource``   ``forbidden_source``    not a plan this server may touch: do not retry
``SourceUnavailable`` ``source_unavailable``  the file or backend cannot answer now: retry
                                              later, or tell the human (a write with
                                              ``applied: "unknown"``: the same call again)
``TooLarge``          ``too_large``           over a limit (2,000,000 characters): split
``EngineError``       ``engine_error``        the notation engine failed: report it
``EngineTimeout``     ``engine_timeout``      the engine ran out of time: retry once, then report
``ModuleSetError``    ``module_set``          (start-up only) the configured modules are unusable
====================  ======================  ==================================================

The README lists the same codes; ``tests/core/test_errors.py`` keeps the two in step.
"""

from __future__ import annotations

from typing import Any

from werkbaum_core import display


class WerkbaumError(Exception):
    """Base class: a failure with a machine-readable code and details.

    Messages and details name paths, link targets and roots as the file system
    gave them, which may hold bytes that are not UTF-8; the message is kept in
    its display form (:func:`display.text`) and so is every string of the
    JSON body, so that no error can make the answer or log line that carries
    it unencodable.
    """

    code = "error"

    def __init__(self, message: str, **details: Any) -> None:
        message = display.text(message)
        super().__init__(message)
        self.message = message
        self.details = {k: v for k, v in details.items() if v is not None}

    def to_json(self) -> dict[str, Any]:
        """The ``{"error": {...}}`` body a tool error carries."""
        body = {"code": self.code, "message": self.message, **self.details}
        return {"error": display.json_values(body)}


class InvalidArgument(WerkbaumError):
    code = "invalid_argument"


class NotFound(WerkbaumError):
    code = "not_found"


class Conflict(WerkbaumError):
    code = "conflict"


class Blocked(WerkbaumError):
    code = "blocked"


class ForbiddenSource(WerkbaumError):
    code = "forbidden_source"


class SourceUnavailable(WerkbaumError):
    code = "source_unavailable"


class TooLarge(WerkbaumError):
    code = "too_large"

    @classmethod
    def over(
        cls,
        what: str,
        limit: int,
        *,
        size: int | None = None,
        unit: str = "characters",
        note: str | None = None,
        **details: Any,
    ) -> TooLarge:
        """The one wording of a size refusal, wherever it is found (a file, a document,
        an engine, a change): ``WHAT has SIZE UNIT; the limit is LIMIT UNIT (NOTE)``, or
        ``WHAT is too large; …`` when the size is not known (reading stopped at the
        bound), with ``limit`` and ``size`` as details an agent can compare."""
        told = f"has {size:,} {unit}" if size is not None else "is too large"
        message = f"{what} {told}; the limit is {limit:,} {unit}"
        if note:
            message += f" ({note})"
        return cls(message, limit=limit, size=size, **details)


class EngineError(WerkbaumError):
    """The JS engine failed: a bug in a module, a dead executor, a timeout."""

    code = "engine_error"


class EngineTimeout(EngineError):
    code = "engine_timeout"


class EngineCancelled(EngineError):
    """The engine call was stopped because the request it served was cancelled."""

    def __init__(self, entry: str) -> None:
        super().__init__("the engine call was stopped: its request was cancelled", entry=entry)


class ModuleSetError(WerkbaumError):
    """A module set cannot be used (missing file or export); raised at start-up."""

    code = "module_set"


def from_json(body: dict[str, Any]) -> WerkbaumError:
    """The typed error for an engine entry's answer ``{"code", "message", …details}``.

    Entries answer an agent's mistake (an unknown id, a text over the limit) as
    data, so that details such as ``didYouMean`` cross the executor boundary.
    """
    classes: dict[str, type[WerkbaumError]] = {
        cls.code: cls for cls in (InvalidArgument, NotFound, TooLarge)
    }
    code = str(body.get("code"))
    details = {k: v for k, v in body.items() if k not in ("code", "message")}
    return classes.get(code, EngineError)(str(body.get("message") or code), **details)
