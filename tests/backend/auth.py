"""The master password and the global login throttle (documents-api §2.2, §9).

Upstream protects only ``GET /documents`` with HTTP Basic (user ``werkbaum``),
checks every ``Authorization`` header against a *global* failure counter and,
once ``max_attempts`` failures piled up, answers any request carrying that
header with 429 + ``Retry-After`` for ``lockout`` — before looking at the
password.  This module holds that state; the HTTP layer decides when to ask.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import math
import threading
from datetime import datetime, timedelta

USER = "werkbaum"


class PasswordHashError(ValueError):
    """A configured hash this stand-in cannot check (only ``{noop}`` is supported)."""


def check_hash_supported(password_hash: str | None) -> None:
    """Fail at start-up, not at the first login, for a hash scheme we cannot verify."""
    if password_hash is not None and not password_hash.startswith("{noop}"):
        scheme = password_hash.split("}", 1)[0] + "}" if password_hash.startswith("{") else "none"
        raise PasswordHashError(
            f"unsupported master-password hash scheme {scheme}; the stand-in verifies "
            "only '{noop}<password>' (use --master-password for a plain one)"
        )


def basic_credentials(header: str) -> tuple[str, str] | None:
    """``(user, password)`` of a ``Basic`` header; ``None`` if it is not Basic at all.

    A Basic header that does not decode counts as wrong credentials, so it
    comes back as an impossible user rather than ``None``.
    """
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ("", "\0invalid")
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else ("", "\0invalid")


def password_matches(password_hash: str | None, user: str, password: str) -> bool:
    """Constant-time check; with no hash configured nothing ever matches (``denyAll``)."""
    if password_hash is None or not password_hash.startswith("{noop}"):
        return False
    expected = password_hash[len("{noop}") :].encode("utf-8")
    user_ok = hmac.compare_digest(user.encode("utf-8"), USER.encode("utf-8"))
    password_ok = hmac.compare_digest(password.encode("utf-8"), expected)
    return user_ok and password_ok


class LoginThrottle:
    """Global failure counter with a timed lock; a success resets the counter."""

    def __init__(self, max_attempts: int, lockout: timedelta) -> None:
        self._max_attempts = max_attempts
        self._lockout = lockout
        self._failures = 0
        self._locked_until: datetime | None = None
        self._lock = threading.Lock()

    def retry_after(self, now: datetime) -> int | None:
        """Whole seconds until the lock ends (at least 1), or ``None`` when not locked."""
        with self._lock:
            if self._locked_until is None or now >= self._locked_until:
                return None
            return max(1, math.ceil((self._locked_until - now).total_seconds()))

    def failure(self, now: datetime) -> None:
        with self._lock:
            self._failures += 1
            if self._failures >= self._max_attempts:
                self._locked_until = now + self._lockout
                self._failures = 0

    def success(self) -> None:
        with self._lock:
            self._failures = 0
