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
