"""werkbaum_core: the transport-free core of werkbaum-mcp.

Analyse a plan exactly as the Werkbaum editor does::

    from werkbaum_core import Engine
    analysis = Engine.default().analyze(open("plan.werkbaum").read())
    for warning in analysis.warnings or ():
        print(warning.line, warning.text)

This package never imports ``mcp`` or a transport.
"""

from werkbaum_core.__version__ import __version__
from werkbaum_core.engine import EXECUTORS, Engine
from werkbaum_core.errors import (
    Blocked,
    Conflict,
    EngineError,
    ForbiddenSource,
    InvalidArgument,
    ModuleSetError,
    NotFound,
    SourceUnavailable,
    TooLarge,
    WerkbaumError,
)
from werkbaum_core.model import Analysis, AssigneeLoads, Node, Overload, Path, Warning
from werkbaum_core.text import MAX_TEXT_CHARS, checksum

__all__ = [
    "EXECUTORS",
    "MAX_TEXT_CHARS",
    "Analysis",
    "AssigneeLoads",
    "Blocked",
    "Conflict",
    "Engine",
    "EngineError",
    "ForbiddenSource",
    "InvalidArgument",
    "ModuleSetError",
    "Node",
    "NotFound",
    "Overload",
    "Path",
    "SourceUnavailable",
    "TooLarge",
    "Warning",
    "WerkbaumError",
    "__version__",
    "checksum",
]
