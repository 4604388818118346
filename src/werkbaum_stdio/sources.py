"""How the stdio server maps a ``source`` string to a store (spec §3).

Document sources (a documents URL on any host the agent names, a share
link, or a bare uuid on the default ``--server``) go to the documents
store; every other source is a file path under the roots.
"""

from __future__ import annotations

import attrs

from werkbaum_core.errors import InvalidArgument
from werkbaum_core.rules.catalogue import Resolved
from werkbaum_core.stores.documents import DocumentStore, looks_like_document
from werkbaum_core.stores.protocol import Snapshot
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.mirror import MirrorFiles

URL_PREFIXES = ("http://", "https://")


@attrs.frozen
class LocalSources:
    files: FileStore
    documents: DocumentStore
    mirror_files: MirrorFiles | None = None
    """Mirror files stand for their documents (spec §8): the server is the source."""

    def resolve(self, source: str) -> Resolved:
        if looks_like_document(source) or source.lower().startswith(URL_PREFIXES):
            # parse() names what is wrong with a URL that is not a document's.
            return Resolved(store=self.documents, key=self.documents.parse(source).url)
        document = self.mirror_files.redirect(source) if self.mirror_files else None
        if document is not None:
            return Resolved(store=self.documents, key=document, redirected_to=document)
        return Resolved(store=self.files, key=source)

    def read_document(self, document: str) -> Snapshot:
        """The ``werkbaum://doc/{document}`` resource: documents only, never a file."""
        resolved = self.resolve(document)
        if resolved.store is not self.documents:
            raise InvalidArgument(
                "werkbaum://doc/ takes a document URL, share link or uuid", source=document
            )
        return self.documents.read(resolved.key)
