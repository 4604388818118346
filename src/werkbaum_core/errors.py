"""Typed errors of the core.

Every failure an agent can recover from is one of these, with a stable
``code`` that the adapters put into the tool error (spec §13), so that a model
reads ``{"error": {"code": ...}}`` and knows what to do next.
"""

from __future__ import annotations

from typing import Any


class WerkbaumError(Exception):
    """Base class: a failure with a machine-readable code and details."""

    code = "error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = {k: v for k, v in details.items() if v is not None}

    def to_json(self) -> dict[str, Any]:
        """The ``{"error": {...}}`` body a tool error carries."""
        return {"error": {"code": self.code, "message": self.message, **self.details}}


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


class EngineError(WerkbaumError):
    """The JS engine failed: a bug in a module, a dead executor, a timeout."""

    code = "engine_error"


class EngineTimeout(EngineError):
    code = "engine_timeout"


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
