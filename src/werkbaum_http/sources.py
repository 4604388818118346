"""How the HTTP server maps a ``source`` string to a store: shared documents only (spec §3, §11).

A ``werkbaum://doc/…`` resource URI stands for the document it names. A remote
caller must not reach the server's file system, nor make it fetch
arbitrary URLs. So anything that is not a document source — a path, a
``werkbaum://file/…`` URI, a URL of another shape — is ``forbidden_source``
before any I/O, and a document on a backend the operator did not configure is
refused by the store's parser (``allow_any_host=False``), also before any
request is made.
"""

from __future__ import annotations

import attrs

from werkbaum_core.errors import ForbiddenSource
from werkbaum_core.rules.catalogue import Resolved
from werkbaum_core.stores.documents import DocumentStore, looks_like_document
from werkbaum_core.stores.protocol import Snapshot
from werkbaum_core.stores.sources import document_in_uri


@attrs.frozen
class DocumentSources:
    """Sources over one :class:`DocumentStore` restricted to its configured backends."""

    store: DocumentStore

    def resolve(self, source: str) -> Resolved:
        return self._resolve_document(document_in_uri(source) or source)

    def read(self, document: str) -> Snapshot:
        """The ``werkbaum://doc/{document}`` resource, under the same rules as a tool's
        ``source``; ``document`` is the template's value, percent-decoded once already,
        so it is taken as it stands (never decoded again as a resource URI)."""
        resolved = self._resolve_document(document)
        return resolved.store.read(resolved.key)

    def _resolve_document(self, source: str) -> Resolved:
        if not looks_like_document(source):
            raise ForbiddenSource(
                "this server serves shared documents only: pass a document URL "
                "(…/api/v1/documents/<uuid>) on one of its backends, a share link, or a bare "
                "uuid; files are not available remotely",
                source=source,
                allowed=list(self.store.servers),
            )
        ref = self.store.parse(source)  # ForbiddenSource for an unconfigured backend
        return Resolved(store=self.store, key=ref.url)
