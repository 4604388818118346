"""``werkbaum check``'s findings: one :class:`Diagnostic` per listed warning, per type of
the warnings beyond the 1,000 a file lists (a count), or per unreadable file.

The facts come from the engine (one analysis per file, with ``View(columns=True)``:
each warning carries the column of the token it names, found by ``columns.js``);
this module only places them for a reader: which line and column to point at,
how severe, and the message without the engine's own "Line N:" prefix, which
the location already says. No plan line is read here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from werkbaum_core.model import Analysis, Warning

ERROR = "error"
WARNING = "warning"
UNREADABLE = "unreadable"
"""Type of a file that cannot be read (missing, a FIFO, a device, not UTF-8, too large)."""
NOT_ANALYSED = "notAnalysed"
"""Type of a file the engine refused (too large for it, an engine failure)."""

EXIT_CLEAN = 0
EXIT_WARNINGS = 1
EXIT_UNREADABLE = 2

SUMMARIES = {
    "mixedGate": "The children of one node mix gate kinds.",
    "unknownStatus": "A status box holds an unknown character.",
    "descStray": "A line belongs to no node.",
    "duplicateId": "An id is given to two nodes.",
    "xorConflict": "An exactly-one group has more than one realized alternative.",
    "unknownDep": "A dependency points to no node.",
    "unknownDesc": "A description block matches no node.",
    "sizeConflict": "The sized parts of a node add up to more than its size.",
    "assigneeOverload": "One person carries most of the open work on the cheapest path.",
    "cheapApprox": "The cheapest path is only approximate.",
    UNREADABLE: "The file cannot be read as a plan.",
    NOT_ANALYSED: "The plan cannot be analysed.",
}
"""One sentence per diagnostic type, for rule lists (SARIF) and help texts."""


@attrs.frozen(kw_only=True)
class Diagnostic:
    """One finding in one file; ``line``/``column`` (1-based) None when it has no place."""

    file: str
    type: str
    severity: str
    message: str
    line: int | None = None
    column: int | None = None
    fatal: bool = False
    """The file was not analysed (exit 2), as opposed to a finding about the plan."""
    unlisted: int | None = None
    """Not one finding but a count: the findings of this type that a file had beyond
    the 1,000 it lists (the engine's cut), counted but not listed."""

    @property
    def count(self) -> int:
        """How many findings it stands for."""
        return 1 if self.unlisted is None else self.unlisted

    def exit_code(self, strict: bool) -> int:
        if self.fatal:
            return EXIT_UNREADABLE
        return EXIT_WARNINGS if self.severity == ERROR or strict else EXIT_CLEAN


def failure(file: str, type: str, reason: str) -> Diagnostic:
    """A file that could not be read or analysed: one diagnostic, exit 2."""
    return Diagnostic(file=file, type=type, severity=ERROR, message=reason, fatal=True)


def from_analysis(file: str, analysis: Analysis) -> list[Diagnostic]:
    """The diagnostics of the warnings a plan's analysis lists, analysed with
    ``View(columns=True)`` (the engine gives each warning the column of its token), in
    the order of the places they point at (a mixed gate points at a later sibling than
    the engine's line)."""
    labels = {node.line: node.label for node in analysis.nodes()}
    found = [_from_warning(file, w, labels) for w in analysis.warnings or ()]
    return sorted(found, key=lambda d: (d.line or 0, d.column or 0))


def unlisted(file: str, analysis: Analysis) -> list[Diagnostic]:
    """One diagnostic per type of the warnings the analysis did not list, counting them.

    An analysis lists at most 1,000 warnings, the structural ones first (a file that is
    no plan, 2 MB of stray lines, has a million): ``werkbaum check`` prints these counts
    after the listed ones,
    as a compiler stops listing after its error limit (listing a million cost 35 s,
    2 GB and 216 MB of output), and they still count in its summary and exit status.
    """
    cut = analysis.warnings_cut
    if cut is None:
        return []
    first = f"at most {cut.listed:,} findings of a file are listed"
    return [
        Diagnostic(
            file=file,
            type=rest.type,
            severity=ERROR if rest.structural else WARNING,
            message=f"{rest.count:,} more not listed ({first})",
            unlisted=rest.count,
        )
        # errors first, as the listed findings choose them (else the engine's order)
        for rest in sorted(cut.unlisted, key=lambda rest: not rest.structural)
    ]


def _from_warning(file: str, warning: Warning, labels: dict[int, str]) -> Diagnostic:
    message = warning.text
    if warning.line is not None:
        message = message.removeprefix(f"Line {warning.line}: ")
    line = warning.line
    if warning.type == "mixedGate":
        # Point at the sibling whose gate differs, and name the group's first child.
        line = warning.fields.get("siblingLine", line)
        first = labels.get(warning.line or 0, "")
        message += f' The group\'s first child is "{first}" (line {warning.line}).'
    column = warning.fields.get("column")
    line = warning.fields.get("columnLine", line)  # the token is on a continuation line
    return Diagnostic(
        file=file,
        type=warning.type,
        severity=ERROR if warning.structural else WARNING,
        message=message,
        line=line,
        column=column if isinstance(column, int) else None,
    )


def worst_exit(diagnostics: Iterable[Diagnostic], strict: bool) -> int:
    """The exit status of a run: the worst of all its diagnostics."""
    return max((d.exit_code(strict) for d in diagnostics), default=EXIT_CLEAN)


def summary(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """``3 errors, 1 warning in 2 files (5 checked)``, or ``no problems (5 files checked)``;
    a file that could not be read or analysed is said apart, and not counted as checked:
    ``1 error, 0 warnings in 1 file; 1 file not read (2 checked)``."""
    unread = len({d.file for d in diagnostics if d.fatal})
    findings = [d for d in diagnostics if not d.fatal]
    checked = files - unread
    if not findings and not unread:
        return f"no problems ({_count(files, 'file')} checked)"
    said = []
    if findings:
        errors, warnings = counts(findings)
        affected = len({d.file for d in findings})
        said.append(
            f"{_count(errors, 'error')}, {_count(warnings, 'warning')} "
            f"in {_count(affected, 'file')}"
        )
    if unread:
        said.append(f"{_count(unread, 'file')} not read")
    return f"{'; '.join(said)} ({checked:,} checked)"


def counts(diagnostics: Iterable[Diagnostic]) -> tuple[int, int]:
    """(errors, warnings): the findings, the ones counted but not listed included."""
    errors = warnings = 0
    for d in diagnostics:
        if d.severity == ERROR:
            errors += d.count
        else:
            warnings += d.count
    return errors, warnings


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n:,} {noun}s"
