"""Settings of the HTTP server, and how they reach uvicorn's worker processes.

uvicorn starts ``--workers N`` as fresh processes that import the app factory
by name, so the settings travel as one JSON environment variable
(:data:`ENV_CONFIG`) that the CLI sets before it starts uvicorn. The tokens
are not part of that JSON: they are read from their own variables in every
worker, exactly where the operator put them, and are kept out of ``repr`` so
that no log line or traceback can show them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import attrs

from werkbaum_http.hosts import AllowedHosts

ENV_TOKEN = "WERKBAUM_MCP_TOKEN"
ENV_READ_TOKEN = "WERKBAUM_MCP_READ_TOKEN"
ENV_CONFIG = "WERKBAUM_HTTP_CONFIG"
MIN_TOKEN_CHARS = 32
DEFAULT_ALLOWED_HOSTS = ("127.0.0.1:*", "localhost:*")
DEFAULT_MAX_CONCURRENT = 16
"""In-flight MCP requests per worker before new ones get 503: enough for several agents,
small enough that a burst cannot pile up unbounded threads, memory and JS work."""
MAX_BODY_BYTES = 8 * 1024 * 1024
"""Room for a 2,000,000-character plan (the backend's limit) in UTF-8 JSON even if every
character took 4 bytes (8,000,000 bytes plus the envelope); the SDK's 4 MiB default would
refuse legal plans. Larger bodies get 413 before any parsing."""


class ConfigError(Exception):
    """A start-up configuration problem; the message is one line for the operator."""


def _check_token(name: str, value: str) -> str:
    """A token must be long and plain; the message never contains the value."""
    if len(value) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{name} must be at least {MIN_TOKEN_CHARS} characters "
            f"(it has {len(value)}); generate one with: openssl rand -hex 32"
        )
    if not value.isascii() or not value.isprintable() or any(c.isspace() for c in value):
        raise ConfigError(f"{name} must be printable ASCII without spaces")
    return value


@attrs.frozen
class Tokens:
    """The bearer tokens: ``full`` sees every tool, ``read`` (optional) only the read tools."""

    full: str = attrs.field(repr=False)
    read: str | None = attrs.field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Tokens:
        """Read and check the tokens; :class:`ConfigError` if the server must not start."""
        env = os.environ if environ is None else environ
        full = env.get(ENV_TOKEN, "")
        if not full:
            raise ConfigError(
                f"{ENV_TOKEN} is not set; the HTTP server refuses to run without it (generate "
                "one with: openssl rand -hex 32)"
            )
        _check_token(ENV_TOKEN, full)
        read = env.get(ENV_READ_TOKEN) or None
        if read is not None:
            _check_token(ENV_READ_TOKEN, read)
            if read == full:
                raise ConfigError(f"{ENV_READ_TOKEN} must differ from {ENV_TOKEN}")
        return cls(full=full, read=read)


@attrs.frozen
class HttpConfig:
    """Everything but the tokens; JSON-serialisable for the worker processes."""

    servers: tuple[str, ...]
    engine: str | None = None
    frontend: str | None = None
    read_only: bool = False
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    max_concurrent: int = DEFAULT_MAX_CONCURRENT

    def __attrs_post_init__(self) -> None:
        if not self.servers:
            raise ConfigError(
                "at least one --server URL is required (the HTTP server serves shared "
                "documents only)"
            )
        if self.max_concurrent < 1:
            raise ConfigError("--max-concurrent must be at least 1")
        if not self.allowed_hosts:
            raise ConfigError("at least one --allowed-host is required")
        try:
            AllowedHosts.parse(self.allowed_hosts)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> HttpConfig:
        raw: dict[str, Any] = json.loads(text)
        raw["servers"] = tuple(raw["servers"])
        raw["allowed_hosts"] = tuple(raw["allowed_hosts"])
        return cls(**raw)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HttpConfig:
        env = os.environ if environ is None else environ
        text = env.get(ENV_CONFIG)
        if not text:
            raise ConfigError(
                f"{ENV_CONFIG} is not set; start the server with werkbaum-mcp-http, "
                "which sets it for its workers"
            )
        return cls.from_json(text)
