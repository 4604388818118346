"""How the stdio server maps a ``source`` string to a store (spec §3)."""

from __future__ import annotations

import attrs

from werkbaum_core.errors import SourceUnavailable
from werkbaum_core.rules.catalogue import Resolved
from werkbaum_stdio.files import FileStore

DOCUMENT_PREFIXES = ("http://", "https://")


@attrs.frozen
class LocalSources:
    """Files under the roots (shared documents join in with the documents store)."""

    files: FileStore

    def resolve(self, source: str) -> Resolved:
        if source.startswith(DOCUMENT_PREFIXES):
            raise SourceUnavailable(
                "shared documents need a backend; start werkbaum-mcp with --server URL",
                source=source,
            )
        return Resolved(store=self.files, key=source)
