"""The backend's error answers, as exceptions the HTTP layer turns into bodies.

Most errors are RFC 9457 problem details with German texts (documents-api §1).
Two are not: the content-patch conflict is a plain ``ContentConflict`` JSON
(§2.6), and the 401/429 of the security filter carry Spring Boot's generic
error body (§2.2, §9), so each has its own exception type.
"""

from __future__ import annotations

from typing import Any, ClassVar

TITLE_BAD_REQUEST = "Ungültige Anfrage"
TITLE_NOT_FOUND = "Dokument nicht gefunden"
TITLE_DELETED = "Dokument gelöscht"
TITLE_UNAPPLICABLE = "Diff nicht anwendbar"
TITLE_CONFLICT = "Konflikt"


class ApiError(Exception):
    """An error answered with ``application/problem+json``."""

    def __init__(
        self, status: int, title: str, detail: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status = status
        self.title = title
        self.detail = detail
        self.headers = headers or {}

    def body(self, instance: str) -> dict[str, Any]:
        return {
            "type": "about:blank",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "instance": instance,
        }


def bad_request(detail: str) -> ApiError:
    return ApiError(400, TITLE_BAD_REQUEST, detail)


def not_found(doc_id: str) -> ApiError:
    return ApiError(404, TITLE_NOT_FOUND, f"Dokument {doc_id} nicht gefunden.")


def deleted(doc_id: str) -> ApiError:
    return ApiError(
        404,
        TITLE_DELETED,
        f"Dokument {doc_id} wurde gelöscht; wiederherstellen mit "
        f"POST /api/v1/documents/{doc_id}/restore",
    )


def unapplicable(detail: str) -> ApiError:
    return ApiError(422, TITLE_UNAPPLICABLE, detail)


class ContentConflict(Exception):
    """409 on ``PATCH …/content``: ``{currentVersion, opsSinceBase}``, not problem+json."""

    def __init__(self, current_version: int, ops_since_base: list[dict[str, Any]]) -> None:
        super().__init__(f"conflict with version {current_version}")
        self.current_version = current_version
        self.ops_since_base = ops_since_base

    def body(self) -> dict[str, Any]:
        return {"currentVersion": self.current_version, "opsSinceBase": self.ops_since_base}


class FrameworkError(Exception):
    """A security-filter answer (401, 429) with Spring Boot's generic error body."""

    REASONS: ClassVar[dict[int, str]] = {401: "Unauthorized", 429: "Too Many Requests"}

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"{status} {self.REASONS.get(status, '')}")
        self.status = status
        self.headers = headers or {}

    def body(self, path: str, timestamp: str) -> dict[str, Any]:
        return {
            "timestamp": timestamp,
            "status": self.status,
            "error": self.REASONS.get(self.status, "Error"),
            "path": path,
        }
