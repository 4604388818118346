"""A browser-like co-editor for tests: talks to a backend directly, as the editor would."""

from __future__ import annotations

import itertools
from typing import Any

import httpx

from tests.backend.server import Backend
from werkbaum_core import checksum


class Human:
    """A browser-like co-editor that talks to the backend directly (clientId ``c-human``)."""

    def __init__(self, backend: Backend) -> None:
        self.api = backend.base_url + "/api/v1/documents"
        self.http = httpx.Client(timeout=10)
        self._seq = itertools.count(1)

    def create(self, content: str, title: str = "Plan") -> str:
        response = self.http.post(self.api, json={"title": title, "content": content})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def get(self, doc_id: str) -> dict[str, Any]:
        response = self.http.get(f"{self.api}/{doc_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def history(self, doc_id: str) -> list[dict[str, Any]]:
        body: list[dict[str, Any]] = self.http.get(f"{self.api}/{doc_id}/history").json()
        return body

    def patch(self, doc_id: str, ops: list[dict[str, Any]], name: str = "Anna") -> int:
        """A PATCH on the current version (the editor's debounced push); returns the version."""
        doc = self.get(doc_id)
        body = {
            "baseVersion": doc["version"],
            "checksum": checksum(doc["content"]),
            "clientId": "c-human",
            "seq": next(self._seq),
            "displayName": name,
            "ops": ops,
        }
        response = self.http.patch(f"{self.api}/{doc_id}/content", json=body)
        assert response.status_code == 200, response.text
        return int(response.json()["version"])

    def delete(self, doc_id: str) -> None:
        assert self.http.delete(f"{self.api}/{doc_id}").status_code == 204
