"""A plan file's bytes and the text an agent sees, both ways (hardening: byte-exact endings).

**Reading.** The file is UTF-8, optionally with a BOM. Its lines end in
``\\r\\n``, ``\\n`` or (the last) nothing. The agent's text is the file with
the BOM removed and every ``\\r\\n`` turned into ``\\n`` — nothing else: a
lone ``\\r`` inside a line stays a character of that line, as the notation's
parser (which splits at ``\\n`` only) treats it. The checksum stays the
documents API's (``werkbaum_core.text.checksum``: CRLF, then a lone CR, to
LF, then SHA-256), computed over this text; so two texts that differ only in
how lines break are the same plan to the checksum, as they are to the API.

**Writing.** The new text is compared with the file's lines *normalised*
the same way (lone CR → line break), because the engine's line operations
(``apply_ops``, ``write``) normalise the text they produce while the
line verbs do not. Then:

* a line whose normalised content comes back unchanged — whether as one line
  with its lone CR or split at it — gets the file's exact bytes again,
  ending included (:mod:`.line_match` finds them);
* a changed line keeps the ending of the line it replaces;
* a new line takes the ending of the line it follows, the first line of the
  file the file's majority ending (``\\r\\n`` when more lines end so, else
  ``\\n``);
* a ``\\r`` before a line break of the new text is part of that break (an
  agent's CRLF), a lone ``\\r`` elsewhere is content;
* a leading U+FEFF of the new text is the byte-order mark, not content: the
  file keeps its own BOM (or its lack of one) and never gets two.

A created file gets the text's bytes as given (a leading U+FEFF as its BOM).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from werkbaum_core.text import normalize_newlines
from werkbaum_stdio.line_match import matching

BOM = b"\xef\xbb\xbf"
BOM_CHAR = "\ufeff"
CRLF = "\r\n"
LF = "\n"


@attrs.frozen
class FileText:
    """A decoded plan file: the agent's ``text`` and the file's own ``body`` (BOM removed)."""

    text: str
    body: str
    bom: bool
    uniform: str | None = None
    """``\\n`` or ``\\r\\n`` if every line ends so and no other CR occurs: then a
    write needs no line matching (the common case, and linear)."""


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
    return FileText(text=body.replace(CRLF, LF), body=body, bom=bom, uniform=_uniform(body))


def encode_new(text: str) -> bytes:
    """The bytes of a new file: the text as given, a leading U+FEFF as the BOM."""
    if text.startswith(BOM_CHAR):
        return BOM + text[1:].encode("utf-8")
    return text.encode("utf-8")


def encode_update(text: str, old: FileText) -> bytes:
    """The bytes that store ``text`` in place of ``old``, keeping what is the file's own."""
    text = text.removeprefix(BOM_CHAR)
    if old.uniform is not None:  # what the rules below give when every line ends alike
        data = text.replace(CRLF, LF).replace(LF, old.uniform).encode("utf-8")
        return BOM + data if old.bom else data
    new = _new_lines(text)
    old_lines = _raw_lines(old.body)
    old_parts = [_split_ending(raw) for raw in old_lines]
    reused = _reused(old_parts, new)
    majority = _majority(old_parts)
    out: list[str] = []
    cursor = 0  # the first old line not yet reused or replaced
    following = [j for j in reused if j is not None and j >= 0]
    upcoming = 0  # index into ``following``: the next old line that comes back
    previous = majority
    index = 0
    while index < len(new):
        line, terminated = new[index]
        j = reused[index]
        if j is not None:
            content, ending = old_parts[j]
            span = _span(reused, index)
            terminated = new[index + span - 1][1]
            index += span
            upcoming += 1
            cursor = j + 1
            if ending and terminated:
                out.append(old_lines[j])
                previous = ending
                continue
            ending = (ending or majority) if terminated else ""
        else:
            index += 1
            content = line.removesuffix("\r") if terminated else line
            limit = following[upcoming] if upcoming < len(following) else len(old_parts)
            if cursor < limit:  # a changed line: it keeps the ending of the one it replaces
                ending = old_parts[cursor][1] or majority
                cursor += 1
            else:  # an added line: the ending of the line it follows
                ending = previous
            ending = ending if terminated else ""
        out.append(content + ending)
        previous = ending or majority
    data = "".join(out).encode("utf-8")
    return BOM + data if old.bom else data


def _uniform(body: str) -> str | None:
    crs = body.count("\r")
    if crs == 0:
        return LF
    if crs == body.count(CRLF) == body.count(LF):
        return CRLF
    return None


def _raw_lines(body: str) -> tuple[str, ...]:
    pieces = body.split(LF)
    lines = [piece + LF for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return tuple(lines)


def _split_ending(raw: str) -> tuple[str, str]:
    """``(content, ending)`` of one raw line; the ending is ``\\r\\n``, ``\\n`` or empty."""
    if raw.endswith(CRLF):
        return raw[:-2], CRLF
    if raw.endswith(LF):
        return raw[:-1], LF
    return raw, ""


def _new_lines(text: str) -> list[tuple[str, bool]]:
    """The new text's lines (split at ``\\n`` only), each with whether a break ends it."""
    pieces = text.split(LF)
    lines = [(piece, True) for piece in pieces[:-1]]
    if pieces[-1] or not lines:
        lines.append((pieces[-1], False))
    return lines


def _normalised(content: str, terminated: bool) -> list[str]:
    """A line's pieces as the checksum sees them (a lone CR breaks; CRLF is one break)."""
    pieces = normalize_newlines(content + LF if terminated else content).split(LF)
    return pieces[:-1] if terminated else pieces


def _reused(old: Sequence[tuple[str, str]], new: Sequence[tuple[str, bool]]) -> list[int | None]:
    """Per new line: the old line whose normalised content it starts, if it comes back whole.

    A run of new lines that together are exactly one old line's pieces (a
    line with lone CRs that the engine split) is marked at its first line and
    :func:`_span` counts it; the other lines of the run are marked with -1.
    """
    old_pieces: list[str] = []
    owner: list[int] = []
    first: list[int] = []
    for j, (content, ending) in enumerate(old):
        first.append(len(old_pieces))
        pieces = _normalised(content, bool(ending))
        old_pieces.extend(pieces)
        owner.extend([j] * len(pieces))
    counts = []
    new_pieces: list[str] = []
    for line, terminated in new:
        pieces = _normalised(line, terminated)
        counts.append(len(pieces))
        new_pieces.extend(pieces)
    pairs = matching(old_pieces, new_pieces)
    result: list[int | None] = [None] * len(new)
    q = 0
    i = 0
    while i < len(new):
        p = pairs.get(q)
        if p is not None and first[owner[p]] == p:
            j = owner[p]
            size = (first[j + 1] if j + 1 < len(first) else len(old_pieces)) - p
            span, taken = 0, 0
            while taken < size and i + span < len(new):
                taken += counts[i + span]
                span += 1
            whole = taken == size and all(pairs.get(q + k) == p + k for k in range(size))
            if whole:
                result[i] = j
                for k in range(1, span):
                    result[i + k] = -1
                i += span
                q += size
                continue
        q += counts[i]
        i += 1
    return result


def _span(reused: Sequence[int | None], index: int) -> int:
    span = 1
    while index + span < len(reused) and reused[index + span] == -1:
        span += 1
    return span


def _majority(old: Sequence[tuple[str, str]]) -> str:
    crlf = sum(1 for _, ending in old if ending == CRLF)
    lf = sum(1 for _, ending in old if ending == LF)
    return CRLF if crlf > lf else LF
