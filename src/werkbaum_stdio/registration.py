"""Registration of the core's catalogue on an ``mcp`` ``MCPServer``.

The core defines each tool's JSON Schemas by hand (unknown properties are
rejected, shapes are exact), which ``MCPServer``'s signature-derived schemas
cannot express. So each catalogue entry becomes a :class:`CatalogueTool`: an
``MCPServer`` tool whose published schema is the catalogue's, whose arguments
are validated against that schema, and whose handler runs in a worker thread.
Every result carries the same JSON in ``structuredContent`` and in its text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread
import jsonschema
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field

from werkbaum_core.errors import InvalidArgument, WerkbaumError
from werkbaum_core.rules.catalogue import Caller, Services, ToolSpec
from werkbaum_core.rules.prompts import PromptSpec

MAX_DISPLAY_NAME = 64
DEFAULT_NAME = "Agent"


def to_text(data: Any) -> str:
    """Compact JSON: the text content is read by a model, so no indentation."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def client_name(context: Context[Any, Any]) -> str | None:
    """The client's self-declared name (handshake or per-request ``clientInfo``)."""
    try:
        params = context.session.client_params
    except Exception:  # no session (e.g. a direct call without a connection)
        return None
    info = getattr(params, "client_info", None) if params is not None else None
    name = getattr(info, "name", None)
    return name.strip() or None if isinstance(name, str) else None


def display_name(configured: str | None, context: Context[Any, Any]) -> str:
    """``--name``, else the client's name, else ``Agent``; at most 64 characters."""
    name = configured or client_name(context) or DEFAULT_NAME
    return name[:MAX_DISPLAY_NAME]


def error_result(exc: WerkbaumError, request_id: str | None) -> CallToolResult:
    """A tool error as JSON text only: clients (the TypeScript SDK among them)
    validate any ``structuredContent`` against the tool's output schema, which
    describes the success result, not ``{"error": …}``."""
    body = exc.to_json()
    if request_id is not None:
        body["error"]["requestId"] = request_id
    return CallToolResult(content=[TextContent(type="text", text=to_text(body))], is_error=True)


def _schema_errors(validator: jsonschema.Draft202012Validator, arguments: Any) -> list[str]:
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(arguments)'}: {e.message}" for e in errors]


class CatalogueTool(Tool):
    """An ``MCPServer`` tool backed by a catalogue :class:`ToolSpec`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    spec: ToolSpec = Field(exclude=True)
    services: Services = Field(exclude=True)
    configured_name: str | None = Field(default=None, exclude=True)

    @classmethod
    def build(cls, spec: ToolSpec, services: Services, name: str | None) -> CatalogueTool:
        annotations = spec.annotations()
        return cls(
            fn=_never_called,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            parameters=spec.input_schema,
            fn_metadata=FuncMetadata(arg_model=ArgModelBase, output_schema=spec.output_schema),
            is_async=True,
            context_kwarg=None,
            annotations=ToolAnnotations(
                title=annotations["title"],
                read_only_hint=annotations["readOnlyHint"],
                destructive_hint=annotations.get("destructiveHint"),
                idempotent_hint=annotations.get("idempotentHint"),
                open_world_hint=annotations["openWorldHint"],
            ),
            spec=spec,
            services=services,
            configured_name=name,
        )

    @functools.cached_property
    def _validator(self) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator(self.spec.input_schema)

    async def run(
        self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False
    ) -> CallToolResult:
        request_id = _request_id(context)
        problems = _schema_errors(self._validator, arguments)
        if problems:
            return error_result(
                InvalidArgument("arguments do not match the input schema", problems=problems),
                request_id,
            )
        caller = Caller(display_name(self.configured_name, context), request_id)
        call = functools.partial(self.spec.handler, self.services, arguments, caller)
        try:
            # Not abandoned on cancellation: once a write has begun it completes
            # (file, mirror commit, audit line) even if the client has gone.
            result = await anyio.to_thread.run_sync(call)
        except WerkbaumError as exc:
            return error_result(exc, request_id)
        return CallToolResult(
            content=[TextContent(type="text", text=to_text(result))],
            structured_content=result,
        )


def _request_id(context: Context[Any, Any]) -> str | None:
    try:
        return str(context.request_id)
    except Exception:
        return None


def _never_called(**_: Any) -> None:
    raise AssertionError("CatalogueTool.run replaces the function call")


def prompt(spec: PromptSpec) -> Prompt:
    """An ``MCPServer`` prompt rendering a core :class:`PromptSpec`."""

    def render(**arguments: str) -> str:
        text: str = spec.render(arguments)
        return text

    return Prompt(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        arguments=[
            PromptArgument(name=a.name, description=a.description, required=a.required)
            for a in spec.arguments
        ],
        fn=render,
        context_kwarg=None,
    )


ToolFactory = Callable[[ToolSpec], CatalogueTool]
