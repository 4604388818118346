"""The human command line: ``werkbaum check``, ``werkbaum inspect`` and ``werkbaum mirror``.

``check`` is made for CI and pre-commit hooks: compiler-style diagnostics,
exit 1 when a structural warning is present (any warning with ``--strict``),
exit 2 when a file cannot be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from werkbaum_core import Engine, WerkbaumError
from werkbaum_core.convert import converter
from werkbaum_core.engine import choose_executor
from werkbaum_stdio.report import diagnostic, inspect_report

EXIT_WARNINGS = 1
EXIT_UNREADABLE = 2

app = typer.Typer(
    name="werkbaum",
    help="Check and inspect Werkbaum plans exactly as the editor reads them.",
    no_args_is_help=True,
    add_completion=False,
)

EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="JS executor: auto (v8 if installed, else node, else dukpy), v8, node, dukpy.",
    ),
]
FrontendOption = Annotated[
    str | None,
    typer.Option("--frontend", help="A Werkbaum checkout's frontend/src to load modules from."),
]


def fail(message: str, code: int) -> NoReturn:
    """One line on stderr, then exit with ``code``."""
    typer.echo(f"werkbaum: {message}", err=True)
    raise typer.Exit(code)


def _engine(engine: str | None, frontend: str | None) -> Engine:
    try:
        return Engine.create(choose_executor(engine, frontend=frontend), frontend)
    except WerkbaumError as exc:
        fail(exc.message, EXIT_UNREADABLE)


def _read(path: Path) -> str:
    """The plan's text, or exit 2 with the reason (missing, a directory, not UTF-8)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        fail(f"{path}: not UTF-8 text (byte {exc.start})", EXIT_UNREADABLE)
    except OSError as exc:
        fail(f"{path}: {exc.strerror or exc}", EXIT_UNREADABLE)


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="Plan files to check.", show_default=False)],
    strict: Annotated[
        bool, typer.Option(help="Exit 1 on any warning, not only structural ones.")
    ] = False,
    engine: EngineOption = None,
    frontend: FrontendOption = None,
) -> None:
    """Print every warning as FILE:LINE: TYPE: TEXT; exit 1 if the notation is broken."""
    texts = {path: _read(path) for path in files}
    failed = False
    with _engine(engine, frontend) as eng:
        for path, text in texts.items():
            try:
                warnings = eng.analyze(text, include=["warnings"]).warnings or ()
            except WerkbaumError as exc:
                fail(f"{path}: {exc.message}", EXIT_UNREADABLE)
            for warning in warnings:
                typer.echo(diagnostic(str(path), warning))
                failed = failed or warning.structural or strict
    raise typer.Exit(EXIT_WARNINGS if failed else 0)


@app.command()
def inspect(
    file: Annotated[Path, typer.Argument(help="The plan file.", show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the analysis as JSON.")] = False,
    node: Annotated[str | None, typer.Option("--id", help="Only the subtree of this id.")] = None,
    engine: EngineOption = None,
    frontend: FrontendOption = None,
) -> None:
    """Show the tree with status, effective status, sizes and the cheapest path's stations."""
    text = _read(file)
    with _engine(engine, frontend) as eng:
        try:
            analysis = eng.analyze(text, id=node)
        except WerkbaumError as exc:
            fail(f"{file}: {exc.message}", EXIT_UNREADABLE)
    if as_json:
        payload = converter.unstructure(analysis)
        typer.echo(
            json.dumps(
                {k: v for k, v in payload.items() if v is not None}, ensure_ascii=False, indent=2
            )
        )
    else:
        typer.echo("\n".join(inspect_report(str(file), analysis)))


EXIT_MIRROR_FETCH = 1
EXIT_MIRROR_USAGE = 2
EXIT_MIRROR_GIT = 3
"""``werkbaum mirror`` exits as ``pull-doc`` (documents-api §11.4): 0 written, committed or
unchanged; 1 the fetch failed or the answer is no document; 2 usage; 3 (``pull-doc``: git's own
code) writing the file or git failed."""


@app.command()
def mirror(
    document: Annotated[
        str,
        typer.Argument(
            help="Document URL, ?live= share link, or a bare uuid (with --server).",
            show_default=False,
        ),
    ],
    file: Annotated[
        Path, typer.Argument(help="The mirror file (the whole server text).", show_default=False)
    ],
    git_commit: Annotated[
        bool,
        typer.Option("--git-commit", help="Commit the file (only it), with who changed what."),
    ] = False,
    server: Annotated[
        list[str] | None,
        typer.Option("--server", help="Backend for bare uuids (repeatable; the first counts)."),
    ] = None,
) -> None:
    """Mirror a shared document into FILE, for cron (pull-doc --git-commit --with-history).

    Writes FILE only if it differs; with --git-commit commits it unless it is
    committed as is. Exit 0 written/committed/unchanged, 1 fetch failed, 2 usage,
    3 file or git failed.
    """
    from werkbaum_core.stores.documents import DocumentStore
    from werkbaum_stdio.mirror import Mirror

    try:
        store = DocumentStore(server or [])
    except WerkbaumError as exc:
        fail(exc.message, EXIT_MIRROR_USAGE)
    with store:
        try:
            job = Mirror.create(document, file, store, None, git=git_commit)
        except WerkbaumError as exc:
            fail(exc.message, EXIT_MIRROR_USAGE)
        outcome = job.sync(None)
    if not outcome.ok:
        code = EXIT_MIRROR_FETCH if outcome.stage == "fetch" else EXIT_MIRROR_GIT
        fail(outcome.error or "mirror failed", code)
    typer.echo(outcome.describe())


def main() -> None:
    """Console entry point of ``werkbaum``."""
    sys.exit(app())
