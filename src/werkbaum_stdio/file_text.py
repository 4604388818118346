"""A plan file's bytes and the text an agent sees, both ways (hardening: byte-exact endings).

**Reading.** The file is UTF-8, optionally with a BOM. A line ends in
``\\r\\n``, ``\\n`` or a lone ``\\r`` (a classic Mac file); the last may end in
nothing. The agent's text is the file with the BOM removed and every line
ending as ``\\n``: the text the notation's tools work on (notation §1:
"tools normalise CRLF/CR to LF"; the engine's line operations do so). So
``lines``, ``L<line>`` refs, the parser's nodes and ``apply_ops`` indices all
count the same lines; an agent that was shown a lone CR as part of a line
edited the line above the one it meant (round 22, F2). The checksum stays the
documents API's (``werkbaum_core.text.checksum``, the same normalisation,
then SHA-256) over this text, so the base an agent holds means what it
means for a shared document.

**Writing.** A new text that is this text (the checksum says: the same
plan) leaves the file's bytes as they are. Otherwise its lines (a ``\\r\\n``
or lone ``\\r`` of the new text is a break too, as the checksum counts it) are
matched with the file's lines (:mod:`.line_match`):

* a line that comes back unchanged gets the file's exact bytes again, ending
  included;
* a changed line keeps the ending of the line it replaces;
* a new line takes the ending of the line it follows; the first line of the
  file, and a line after one that had none, the file's majority ending (the
  most frequent of ``\\r\\n``, ``\\n`` and ``\\r``; ``\\n`` on a tie);
* the new text's last line ends in nothing if the new text does;
* an empty line after a line that ends in a lone CR ends in a CR too (an LF there would
  make the two breaks one ``\\r\\n``);
* a leading U+FEFF of the new text is the byte-order mark, not content: the
  file keeps its own BOM (or its lack of one) and never gets two.

So the stored file always has the checksum of the written text
(``tests/stdio/test_file_text.py`` tests these rules as properties). Files
whose lines all end alike (nearly all) take a linear path with the same
result. A created file gets the text's bytes as given (a leading U+FEFF as
its BOM).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

import attrs

from werkbaum_core.text import normalize_newlines
from werkbaum_stdio.line_match import matching

BOM = b"\xef\xbb\xbf"
BOM_CHAR = "\ufeff"
CR = "\r"
CRLF = "\r\n"
LF = "\n"
_ENDINGS = (CRLF, LF, CR)
_LINE = re.compile(r"([^\r\n]*)(\r\n|\n|\r|$)")


@attrs.frozen
class FileText:
    """A decoded plan file: the agent's ``text`` and the file's own ``body`` (BOM removed)."""

    text: str
    body: str
    bom: bool
    uniform: str | None = None
    """``\\n``, ``\\r\\n`` or ``\\r`` if every line ends so: then a write needs no
    line matching (the common case, and linear)."""


def decode(data: bytes) -> FileText:
    """The file's text and lines; ``UnicodeDecodeError`` (offsets into ``data``) if not UTF-8."""
    bom = data.startswith(BOM)
    try:
        body = data[len(BOM) :].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        shift = len(BOM) if bom else 0
        raise UnicodeDecodeError(
            exc.encoding, data, exc.start + shift, exc.end + shift, exc.reason
        ) from None
    return FileText(text=normalize_newlines(body), body=body, bom=bom, uniform=_uniform(body))


def utf16(data: bytes) -> bool:
    """Whether ``data`` is UTF-16 text with a byte-order mark: a file saved as "Unicode" by a
    Windows editor, which is not UTF-8 from its first byte on (other bytes that merely
    start like it are not)."""
    if data[:2] not in (b"\xff\xfe", b"\xfe\xff"):
        return False
    try:
        data.decode("utf-16")
    except UnicodeDecodeError:
        return False
    return True


def encode_new(text: str) -> bytes:
    """The bytes of a new file: the text as given, a leading U+FEFF as the BOM."""
    if text.startswith(BOM_CHAR):
        return BOM + text[1:].encode("utf-8")
    return text.encode("utf-8")


def encode_update(text: str, old: FileText) -> bytes:
    """The bytes that store ``text`` in place of ``old``, keeping what is the file's own."""
    text = normalize_newlines(text.removeprefix(BOM_CHAR))
    prefix = BOM if old.bom else b""
    if text == old.text:
        return prefix + old.body.encode("utf-8")  # the same plan: keep the file
    if old.uniform is not None:
        # What the rules give when every line ends alike, in linear time.
        return prefix + (text if old.uniform == LF else text.replace(LF, old.uniform)).encode()
    return prefix + "".join(_merged(_new_lines(text), _old_lines(old.body))).encode("utf-8")


def _merged(new: Sequence[tuple[str, bool]], old: Sequence[tuple[str, str]]) -> Iterator[str]:
    """The new lines, each with its bytes or ending taken from the old file by the rules."""
    kept = matching([content for content, _ in old], [content for content, _ in new])
    coming_back = iter([kept[index] for index in sorted(kept)] + [len(old)])
    next_back = next(coming_back)  # the next old line that comes back
    cursor = 0  # the first old line neither kept nor replaced yet
    majority = _majority(old)
    previous = majority  # the ending of the line written last
    written = ""
    for index, (content, terminated) in enumerate(new):
        j = kept.get(index)
        if j is not None:
            ending = old[j][1]
            cursor, next_back = j + 1, next(coming_back)
        elif cursor < next_back:  # a changed line: the ending of the line it replaces
            ending = old[cursor][1]
            cursor += 1
        else:  # an added line: the ending of the line it follows
            ending = previous
        if not terminated:
            ending = ""
        elif not ending:
            ending = previous
        if ending == LF and not content and written.endswith(CR):
            ending = CR  # after a lone CR, an LF would read as one CRLF break, not two
        previous = ending or majority
        written = content + ending
        yield written


def _old_lines(body: str) -> list[tuple[str, str]]:
    """The file's lines as ``(content, ending)``; the last one's ending may be ``""``."""
    lines = [(m[1], m[2]) for m in _LINE.finditer(body)]
    if lines and lines[-1] == ("", ""):
        lines.pop()  # the empty match after the last break
    return lines


def _new_lines(text: str) -> list[tuple[str, bool]]:
    """The new text's lines (LF-normalised), each with whether a break ends it."""
    pieces = text.split(LF)
    lines = [(piece, True) for piece in pieces[:-1]]
    if pieces[-1] or not lines:
        lines.append((pieces[-1], False))
    return lines


def _uniform(body: str) -> str | None:
    """The one ending every break of ``body`` has, if there is one (``\\n`` if none)."""
    crs, lfs = body.count(CR), body.count(LF)
    if crs == 0:
        return LF
    if lfs == 0:
        return CR
    crlfs = body.count(CRLF)
    return CRLF if crs == crlfs == lfs else None


def _majority(old: Sequence[tuple[str, str]]) -> str:
    counts = Counter(ending for _, ending in old if ending)
    return max(_ENDINGS, key=lambda ending: (counts[ending], ending == LF))
