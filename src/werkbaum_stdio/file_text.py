"""A plan file's bytes and the text an agent sees, both ways (hardening: byte-exact endings).

**Reading.** The file is UTF-8, optionally with a BOM. Its lines end in
``\\r\\n`` or ``\\n``; the last may end in nothing. The agent's text is the file
with the BOM removed and every ``\\r\\n`` turned into ``\\n`` — nothing else: a
lone ``\\r`` stays a character of its line, as the notation's parser (which
splits at ``\\n`` only) and the line verbs treat it. The checksum stays the
documents API's (``werkbaum_core.text.checksum``: CRLF, then a lone CR, to
LF, then SHA-256) over this text, so the base an agent holds means what it
means for a shared document, and two texts that differ only in how lines
break are the same plan to it.

**Writing.** A new text that normalises like the file's text (the checksum
says: the same plan) leaves the file's bytes as they are. Otherwise the new
lines are compared with the file's lines *normalised* (lone CR → line
break), because the engine's line operations (``apply_ops``, ``write``)
normalise the text they produce while the line verbs do not:

* a line whose normalised content comes back unchanged — as one line with its
  lone CR, or split at it into several — gets the file's exact bytes again,
  ending included (:mod:`.line_match` finds them);
* a changed line keeps the ending of the line it replaces;
* a new line takes the ending of the line it follows; the first line of the
  file, and a line after one that had none, the file's majority ending
  (``\\r\\n`` when more lines end so, else ``\\n``);
* in the new text a ``\\r`` right before a line break belongs to the break (an
  agent's CRLF), a lone ``\\r`` elsewhere is content; a content CR at the end
  of a line is kept by ending that line in ``\\r\\n`` (an ``\\n`` would fuse
  with it). Only ``\\r\\r\\n`` written by an agent reads back as one break
  where its checksum counted two;
* a leading U+FEFF of the new text is the byte-order mark, not content: the
  file keeps its own BOM (or its lack of one) and never gets two.

A line taken from the file is checked to normalise like the new line(s) it
stands for (else the new text's own line is written), so the stored file
always has the checksum of the written text
(``tests/stdio/test_file_text.py`` tests these rules as properties). Files
whose lines all end alike (nearly all) take a linear path with the same
result. A created file gets the text's bytes as given (a leading U+FEFF as
its BOM).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

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
    text = body.replace(CRLF, LF) if "\r" in body else body
    return FileText(text=text, body=body, bom=bom, uniform=_uniform(body))


def encode_new(text: str) -> bytes:
    """The bytes of a new file: the text as given, a leading U+FEFF as the BOM."""
    if text.startswith(BOM_CHAR):
        return BOM + text[1:].encode("utf-8")
    return text.encode("utf-8")


def encode_update(text: str, old: FileText) -> bytes:
    """The bytes that store ``text`` in place of ``old``, keeping what is the file's own."""
    text = text.removeprefix(BOM_CHAR)
    prefix = BOM if old.bom else b""
    if old.uniform == CRLF or (old.uniform == LF and "\r" not in text):
        # What the rules give when every line ends alike, in linear time.
        return prefix + text.replace(CRLF, LF).replace(LF, old.uniform).encode("utf-8")
    if normalize_newlines(text) == normalize_newlines(old.text):
        return prefix + old.body.encode("utf-8")  # the same plan to the checksum: keep the file
    return prefix + "".join(_merged(_new_lines(text), _raw_lines(old.body))).encode("utf-8")


def _merged(new: list[tuple[str, bool]], old_lines: tuple[str, ...]) -> Iterator[str]:
    """The new lines, each with its bytes or ending taken from the old file by the rules."""
    old = [_split_ending(raw) for raw in old_lines]
    reused = _reused(old, new)
    majority = _majority(old)
    coming_back = iter([j for j in reused if j is not None and j >= 0] + [len(old)])
    next_back = next(coming_back)
    cursor = 0  # the first old line neither reused nor replaced yet
    previous = majority
    index = 0
    while index < len(new):
        j = reused[index]
        if j is not None:
            span = _span(reused, index)
            group = new[index : index + span]
            index += span
            next_back = next(coming_back)
            cursor = j + 1
            content, ending = old[j]
            last = index == len(new)
            if not group[-1][1]:
                ending = ""
            elif (ending == "\r" and not last) or not ending:
                ending = majority  # a break that stays one for the notation: LF or CRLF
            line = _line(content, ending)
            if normalize_newlines(line.replace(CRLF, LF)) != _normalised_text(group):
                line = "".join(_line(*_own(text, done, previous)) for text, done in group)
        else:
            text, terminated = new[index]
            index += 1
            if cursor < next_back:  # a changed line: the ending of the line it replaces
                inherited = old[cursor][1]
                cursor += 1
            else:  # an added line: the ending of the line it follows
                inherited = previous
            line = _line(
                *_own(text, terminated, inherited if inherited in (LF, CRLF) else majority)
            )
        yield line
        if line.endswith(LF):
            previous = CRLF if line.endswith(CRLF) else LF


def _own(text: str, terminated: bool, ending: str) -> tuple[str, str]:
    """A line of the new text as content and ending (a CR before its break is the break's)."""
    return (text.removesuffix("\r"), ending) if terminated else (text, "")


def _line(content: str, ending: str) -> str:
    """Content and ending, where an LF after a CR of the content would merge into CRLF."""
    if ending == LF and content.endswith("\r"):
        ending = CRLF
    return content + ending


def _normalised_text(group: Sequence[tuple[str, bool]]) -> str:
    return "".join(normalize_newlines(text + LF if done else text) for text, done in group)


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
    """``(content, ending)`` of one raw line: ``\\r\\n``, ``\\n``, or for the last line
    ``\\r`` (a final lone CR, a break to the checksum) or nothing."""
    if raw.endswith(CRLF):
        return raw[:-2], CRLF
    if raw.endswith(LF):
        return raw[:-1], LF
    if raw.endswith("\r"):
        return raw[:-1], "\r"
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
        pieces = (
            _normalised(content + "\r", False)
            if ending == "\r"
            else _normalised(content, bool(ending))
        )
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
