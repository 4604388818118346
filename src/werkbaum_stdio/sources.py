"""How the stdio server maps a ``source`` string to a store (spec §3).

Document sources (a documents URL on any host the agent names, a share
link, or a bare uuid on the default ``--server``) go to the documents
store; every other source is a file path under the roots — also given as
the ``werkbaum://file/<path>`` URI the server lists it by (percent-encoded),
so an agent can pass a listed resource as it stands; a ``werkbaum://doc/…``
URI stands for its document. A mirror file stands for
its document; it is recognised by where the path resolves (as the file store
resolves it: relative paths under the roots), whatever its spelling.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

import attrs

from werkbaum_core.errors import InvalidArgument, WerkbaumError
from werkbaum_core.rules.catalogue import Resolved
from werkbaum_core.stores.documents import DocumentStore, looks_like_document
from werkbaum_core.stores.protocol import Snapshot
from werkbaum_core.stores.sources import document_in_uri
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.mirror import MirrorFiles

URL_PREFIXES = ("http://", "https://")
FILE_URI_PREFIX = "werkbaum://file/"


def file_uri(source: str) -> str:
    """The ``werkbaum://file/`` URI of a file source (what ``resources/list`` shows)."""
    return FILE_URI_PREFIX + quote(source, safe="/")


def file_path(source: str) -> str:
    """The path a ``werkbaum://file/`` URI names; any other source as it is."""
    if source[: len(FILE_URI_PREFIX)].lower() == FILE_URI_PREFIX:
        return unquote(source[len(FILE_URI_PREFIX) :])
    return source


@attrs.frozen
class LocalSources:
    files: FileStore
    documents: DocumentStore
    mirror_files: MirrorFiles | None = None
    """Mirror files stand for their documents (spec §8): the server is the source."""

    def resolve(self, source: str) -> Resolved:
        source = document_in_uri(source) or source
        if _names_document(source):
            # parse() names what is wrong with a URL that is not a document's.
            return Resolved(store=self.documents, key=self.documents.parse(source).url)
        path = file_path(source)
        document = self._mirror_document(path)
        if document is not None:
            return Resolved(store=self.documents, key=document, redirected_to=document)
        return Resolved(store=self.files, key=path)

    def _mirror_document(self, path: str) -> str | None:
        if self.mirror_files is None:
            return None
        try:
            real = self.files.roots.resolve(path)
        except WerkbaumError:
            return None  # the file store gives the error
        return self.mirror_files.redirect(str(real))

    def read_document(self, document: str) -> Snapshot:
        """The ``werkbaum://doc/{document}`` resource: documents only, never a file.

        ``document`` is the template's value, percent-decoded once already; it is a
        document URL, share link or uuid as it stands, never a resource URI to be
        decoded again.
        """
        if not _names_document(document):
            raise InvalidArgument(
                "werkbaum://doc/ takes a document URL, share link or uuid", source=document
            )
        return self.documents.read(self.documents.parse(document).url)


def _names_document(source: str) -> bool:
    """Whether ``source`` goes to the documents store: a document form, or any http(s)
    URL (which the store refuses with a reason if it names no document)."""
    return looks_like_document(source) or source.lower().startswith(URL_PREFIXES)
