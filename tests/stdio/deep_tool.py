"""A server with one tool whose result nests as deep as asked: the transports' guards are
tested with it, since no catalogue tool answers deeper than the inspect tree's cap.

``python -m tests.stdio.deep_tool`` serves it on stdio with the product's transport.
"""

from __future__ import annotations

from typing import Any

import anyio

from werkbaum_core.rules.catalogue import Caller, Services, ToolSpec
from werkbaum_core.stores.memory import MemoryStore
from werkbaum_stdio.registration import CatalogueTool, PlanServer, plan_server
from werkbaum_stdio.server import serve_stdio

INPUT = {
    "type": "object",
    "properties": {"levels": {"type": "integer", "minimum": 1, "maximum": 100_000}},
    "required": ["levels"],
    "additionalProperties": False,
}


OUTPUT = {"type": "object"}


def nested(levels: int) -> dict[str, Any]:
    """A JSON object ``levels`` objects deep."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"c": value}
    return value


def depth_of(value: Any) -> int:
    levels = 0
    while isinstance(value, dict):
        levels += 1
        value = value.get("c")
    return levels


def _nest(services: Services, arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    return nested(arguments["levels"])


def deep_server() -> PlanServer:
    spec = ToolSpec("nest", "Nest", "An object nested levels deep.", INPUT, OUTPUT, _nest, True)
    services = Services(engine=None, sources=MemoryStore())  # type: ignore[arg-type]
    return plan_server(instructions="test", tools=[CatalogueTool(spec, services)])


if __name__ == "__main__":
    anyio.run(serve_stdio, deep_server())
