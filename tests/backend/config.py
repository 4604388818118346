"""Settings of the stand-in backend: the knobs documents-api §13.11 says tests need.

Defaults are the production values (§5.6, §9).  :meth:`BackendConfig.test_profile`
gives upstream's test profile, and :meth:`BackendConfig.with_case_config`
applies a conformance case's ``config`` block (documents-api §16) on top.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from tests.backend.ops import OPS_MODES

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: str | float | timedelta) -> timedelta:
    """``"2s"``, ``"5m"``, ``"600ms"``, ``"1h"`` or a bare number of seconds.

    The same short forms Spring's ``application.yaml`` uses, so a case's
    ``"lockout": "2s"`` reads as written.
    """
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        return timedelta(seconds=float(value))
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"not a duration: {value!r} (use e.g. 600ms, 2s, 5m, 1h)")
    amount, unit = match.groups()
    return timedelta(seconds=float(amount) * _UNIT_SECONDS[unit or "s"])


@dataclass(frozen=True)
class BackendConfig:
    """Every behaviour-relevant setting; immutable so a running server cannot drift."""

    master_password_hash: str | None = None
    """Spring-style ``{noop}<password>``; ``None`` locks the list for everyone (§9)."""
    max_attempts: int = 5
    lockout: timedelta = timedelta(minutes=15)
    max_wait: timedelta = timedelta(seconds=25)
    milestone_pause: timedelta = timedelta(seconds=30)
    sync_retention: timedelta = timedelta(minutes=5)
    max_ops: int = 1000
    max_content_length: int = 2_000_000
    patch_log_capacity: int = 1024
    prefix: str = ""
    """Sub-path in front of ``/api/v1`` (clients take everything before it as the base, §1)."""
    ops_impl: str = "auto"
    """Line ops, one of ``ops.OPS_MODES``; ``auto`` = the engine if it loads, else Python."""
    clock_control: bool = False
    """Expose ``POST {prefix}/__test__/clock/advance`` (only for an adjustable clock)."""
    service_name: str = "werkbaum-backend"
    service_version: str = "unbekannt"

    def __post_init__(self) -> None:
        if self.prefix and (not self.prefix.startswith("/") or self.prefix.endswith("/")):
            raise ValueError(f"prefix must start with '/' and not end with one: {self.prefix!r}")
        if self.ops_impl not in OPS_MODES:
            raise ValueError(f"unknown ops_impl {self.ops_impl!r}")
        for name in ("max_attempts", "max_ops", "max_content_length", "patch_log_capacity"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")

    @classmethod
    def test_profile(cls, **overrides: Any) -> BackendConfig:
        """Upstream's ``application-test.yaml``: password, 3 attempts, 2 s lockout, 5 s wait."""
        base = cls(
            master_password_hash="{noop}test-geheim",
            max_attempts=3,
            lockout=timedelta(seconds=2),
            max_wait=timedelta(seconds=5),
        )
        return dataclasses.replace(base, **overrides)

    def with_case_config(self, block: Mapping[str, Any]) -> BackendConfig:
        """Apply a conformance case's ``config`` block; unknown keys are an error, not ignored."""
        changes: dict[str, Any] = {}
        for key, value in block.items():
            if key == "master_password":
                changes["master_password_hash"] = None if value is None else "{noop}" + str(value)
            elif key == "master_password_hash":
                changes["master_password_hash"] = value
            elif key in ("lockout", "max_wait", "milestone_pause", "sync_retention"):
                changes[key] = parse_duration(value)
            elif key in ("max_attempts", "max_ops", "max_content_length", "patch_log_capacity"):
                changes[key] = int(value)
            else:
                raise ValueError(f"unknown backend config key {key!r} in a case's config block")
        return dataclasses.replace(self, **changes)
