"""The human command line: ``werkbaum check``, ``inspect``, ``render`` and ``mirror``.

``check`` behaves like the linters people already run in terminals, pre-commit
and CI: every file is checked on its own (an unreadable one is one diagnostic,
not the end of the run), ``file:line:col: severity type: message`` lines or a
machine format, a summary on stderr, and the exit status of the worst file:
0 clean, 1 a structural warning (any warning with ``--strict``), 2 a file that
could not be read or analysed.

Built on click directly, so ``--help`` shows exactly the metavariables and
examples written here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from werkbaum_core import Engine, WerkbaumError, display
from werkbaum_core.convert import converter
from werkbaum_core.engine import LazyEngine, choose_executor
from werkbaum_core.model import View
from werkbaum_stdio import diagnostics as diag
from werkbaum_stdio.command_line import CONTEXT, engine_options, fail, run, version
from werkbaum_stdio.formats import RENDERERS
from werkbaum_stdio.plan_names import PlanNames
from werkbaum_stdio.planfiles import (
    STDIN,
    PlanArg,
    Unreadable,
    expand,
    read_plan,
)
from werkbaum_stdio.render_cli import (
    FORMATS,
    PICTURES_ENTRY,
    draw,
    picture_format,
    write_picture,
)
from werkbaum_stdio.report import inspect_report
from werkbaum_stdio.terminal import MIN_WIDTH, is_terminal, use_colour, width

EXIT_MIRROR_FETCH = 1
EXIT_MIRROR_USAGE = 2
EXIT_MIRROR_GIT = 3
"""``werkbaum mirror``: 0 written, committed, unchanged or skipped; 1 the fetch failed or the
answer is no document; 2 usage; 3 writing the file or git failed (documents-api §11.4)."""


def _start(engine: str | None, frontend: str | None) -> LazyEngine:
    lazy = LazyEngine(choose_executor(engine, frontend=frontend), frontend)
    try:
        lazy.get()
    except WerkbaumError as exc:
        fail(exc.message, diag.EXIT_UNREADABLE)
    return lazy


@click.group(context_settings=CONTEXT)
@version("werkbaum")
def app() -> None:
    """Check and inspect Werkbaum plans exactly as the editor reads them.

    \b
    Examples:
      werkbaum check plans/
      werkbaum inspect plan.werkbaum
      werkbaum render plan.werkbaum -o plan.html
      werkbaum mirror https://werkbaum.example.org/api/v1/documents/UUID plan.werkbaum
    """


@app.command(context_settings=CONTEXT, short_help="Check plans like a linter; exit 1 if broken.")
@click.argument("files", nargs=-1, metavar="[FILE|DIR|-]…")
@click.option(
    "--strict/--no-strict",
    default=False,
    show_default=True,
    help="Exit 1 on any warning, not only on structural ones.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(RENDERERS)),
    default="text",
    show_default=True,
    help="text: FILE:LINE:COL lines; json: one document; github: Actions annotations; "
    "sarif: SARIF 2.1.0 for code scanning.",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="Print the diagnostics only: no summary, no notes."
)
@click.option(
    "--plan-glob",
    "globs",
    multiple=True,
    metavar="PATTERN",
    help="Also take these file names in directories (repeatable; *.werkbaum always; "
    "a name pattern, no '/').",
)
@click.option(
    "--stdin-filename",
    default="<stdin>",
    show_default=True,
    metavar="NAME",
    help="The name that diagnostics of - (standard input) carry.",
)
@engine_options
@version("werkbaum")
def check(
    files: Sequence[str],
    strict: bool,
    fmt: str,
    quiet: bool,
    globs: Sequence[str],
    stdin_filename: str,
    engine: str | None,
    frontend: str | None,
) -> None:
    """Check plans: one line per warning, exit 1 if the notation is broken.

    A DIR stands for every plan file below it (hidden folders such as .git
    and node_modules are skipped), - for standard input. Each file is checked on its own; one
    that cannot be read is reported and the others are still checked.

    \b
    Severity: error for structural warnings (the text is read differently
    from what was meant), warning for content warnings (findings about the
    plan). A file's first 1,000 findings are listed, the rest counted by type.
    Exit status: 0 clean, 1 an error (any warning with --strict), 2 a file or
    directory that could not be read or analysed, or an output that cannot be
    written. No files: exit 0.

    \b
    Examples:
      werkbaum check plans/
      git ls-files -z '*.werkbaum' | xargs -0 werkbaum check --strict --
      cat plan.werkbaum | werkbaum check --stdin-filename plan.werkbaum -
    """
    named = click.get_current_context().get_parameter_source("stdin_filename")
    if named is click.core.ParameterSource.COMMANDLINE and STDIN not in files:
        raise click.UsageError("--stdin-filename names standard input; - is not among the files")
    try:
        names = PlanNames.with_globs(globs)
    except WerkbaumError as exc:
        fail(exc.message, diag.EXIT_UNREADABLE)
    plans = expand(files, names, stdin_filename)
    found: list[diag.Diagnostic] = []
    engines: LazyEngine | None = None
    try:
        for plan in plans:
            try:
                text = read_plan(plan)
            except Unreadable as exc:
                found.append(diag.failure(plan.name, diag.UNREADABLE, exc.reason))
                continue
            engines = engines or _start(engine, frontend)
            found += _check_text(plan.name, text, engines.get())
    finally:
        if engines is not None:
            engines.close()
    colour = fmt == "text" and use_colour(sys.stdout)
    click.echo(RENDERERS[fmt](found, colour), nl=False, color=colour)
    if not quiet:
        click.echo(diag.summary(found, len(plans)) if plans else _nothing_checked(files), err=True)
    sys.exit(diag.worst_exit(found, strict))


def _nothing_checked(files: Sequence[str]) -> str:
    """Why a run checked nothing (exit 0: ``xargs`` runs the command once, file-less, for no
    input), in words that keep a person from reading it as a pass."""
    if not files:
        return "werkbaum: no files given, nothing checked (every plan below here: werkbaum check .)"
    named = ", ".join(display.text(f) for f in files[:3])
    if len(files) > 3:
        named += f" and {len(files) - 3:,} more"
    return (
        f"werkbaum: no plan files in {named}, nothing "
        "checked (*.werkbaum, or --plan-glob; hidden folders, node_modules and symlinked "
        "folders are skipped)"
    )


def _check_text(name: str, text: str, engine: Engine) -> list[diag.Diagnostic]:
    try:
        analysis = engine.analyze(text, include=["tree", "warnings"], view=View(columns=True))
    except WerkbaumError as exc:
        return [diag.failure(name, diag.NOT_ANALYSED, exc.message)]
    return diag.from_analysis(name, analysis) + diag.unlisted(name, analysis)


@app.command(context_settings=CONTEXT, short_help="Show a plan's tree, cheapest path and loads.")
@click.argument("file", metavar="FILE|-")
@click.option("--json", "as_json", is_flag=True, help="Print the engine's analysis as JSON.")
@click.option("--id", "node", metavar="ID", help="Only the subtree of this id, with its own loads.")
@click.option(
    "--depth",
    type=int,
    callback=lambda ctx, param, value: at_least(0, param, value),
    metavar="N",
    help="Draw the tree only N levels below the roots (or --id); a cut node says how many "
    "nodes are below it.",
)
@click.option(
    "--hide-done",
    is_flag=True,
    help="Leave out subtrees that are done, in production or discarded.",
)
@click.option(
    "--find",
    metavar="WORDS",
    help="Only list the nodes whose label, id and owners contain every word (any case).",
)
@click.option(
    "--width",
    "columns",
    type=int,
    callback=lambda ctx, param, value: at_least(MIN_WIDTH, param, value),
    metavar="N",
    help=f"Fit the output to N columns, at least {MIN_WIDTH} "
    "(default: $COLUMNS, else the terminal, else 80).",
)
@engine_options
@version("werkbaum")
def inspect(
    file: str,
    as_json: bool,
    node: str | None,
    depth: int | None,
    hide_done: bool,
    find: str | None,
    columns: int | None,
    engine: str | None,
    frontend: str | None,
) -> None:
    """Show the tree: gates, status, effective status, sizes, dependencies, stations.

    Each child shows its gate (- all of, | any of, = exactly one, + optional),
    then its status box; then the cheapest path, its stations (the open front)
    and the load per person in size points, and the warnings. A key explains
    the marks at the end.

    --depth and --hide-done narrow the tree (the path and the loads stay the
    whole plan's, or the --id subtree's); --find lists the matching nodes only.
    With --json they shape the analysis as the MCP tool's options do.

    \b
    Examples:
      werkbaum inspect plan.werkbaum
      werkbaum inspect --id shop.build --width 60 plan.werkbaum
      werkbaum inspect --depth 1 --hide-done plan.werkbaum
      werkbaum inspect --find "@ben cart" plan.werkbaum
      werkbaum inspect --json plan.werkbaum
    """
    plan = PlanArg("<stdin>", None) if file == STDIN else PlanArg(file, Path(file))
    try:
        text = read_plan(plan)
    except Unreadable as exc:
        fail(f"{file}: {exc.reason}", diag.EXIT_UNREADABLE)
    lazy = _start(engine, frontend)
    try:
        # The report's warnings say where their token is; --json is the tools' analysis,
        # as the options shape it there. The report shows the whole picture around a
        # narrowed tree: its path with the stations named, and its warnings.
        shaped = depth is not None or hide_done
        include = None if as_json or find or not shaped else REPORT_PARTS
        view = View(columns=not as_json, depth=depth, hide_done=hide_done, find=find)
        analysis = lazy.get().analyze(text, id=node, include=include, view=view)
    except WerkbaumError as exc:
        fail(f"{file}: {exc.message}{_suggested(exc)}", diag.EXIT_UNREADABLE)
    finally:
        lazy.close()
    if as_json:
        click.echo(json.dumps(converter.unstructure(analysis), ensure_ascii=False, indent=2))
        return
    found = diag.from_analysis(plan.name, analysis)
    click.echo("\n".join(inspect_report(plan.name, analysis, found, width(columns), node)))


def at_least(least: int, param: click.Parameter, value: int | None) -> int | None:
    """A number option's lower bound, said in words (click's ranges print ``[x>=20]``)."""
    if value is not None and value < least:
        raise click.BadParameter(f"{value} is less than {least}", param=param)
    return value


REPORT_PARTS = ("tree", "warnings", "path", "stations")
"""What the readable report shows of a narrowed tree (a cut or hidden node may be a station)."""


def _suggested(exc: WerkbaumError) -> str:
    """The ids an unknown ``--id`` may have meant, as the tools offer them (``didYouMean``)."""
    similar = exc.details.get("didYouMean")
    if not isinstance(similar, list) or not similar:
        return ""
    return f" (did you mean {', '.join(display.terminal(str(s)) for s in similar)}?)"


@app.command(context_settings=CONTEXT, short_help="Draw a plan as an HTML page or SVG picture.")
@click.argument("file", metavar="FILE|-")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.html|FILE.svg",
    help="Write the picture here (default: standard output).",
)
@click.option("--id", "node", metavar="ID", help="Only the subtree of this id.")
@click.option("--expand", is_flag=True, help="Open the folded subtrees too.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="html or svg (default: from the suffix of -o, else html).",
)
@engine_options
@version("werkbaum")
def render(
    file: str,
    output: Path | None,
    node: str | None,
    expand: bool,
    fmt: str | None,
    engine: str | None,
    frontend: str | None,
) -> None:
    """Draw the plan as one self-contained HTML page or SVG picture.

    Every node is a box with its label, id, size, people and status (colour
    and glyph); the gates, the cheapest path and its stations, effective
    status and warnings are marked; discarded nodes are faded and folded
    subtrees collapsed. No script, nothing loaded. See docs/pictures.md in
    the werkbaum-mcp repository.
    Exit status: 0 written, 2 an unreadable plan, an unknown id or format,
    no -o with a terminal as stdout, or an output that cannot be written.

    \b
    Examples:
      werkbaum render plan.werkbaum -o plan.html
      werkbaum render plan.werkbaum -o plan.svg --expand
      werkbaum render --id shop.build --format svg plan.werkbaum > shop.svg
    """
    if output is None and is_terminal(sys.stdout):
        raise click.UsageError(
            "not writing the picture to a terminal: pass -o FILE.html or -o FILE.svg, "
            "or redirect the output"
        )
    try:
        chosen = picture_format(output, fmt)
    except WerkbaumError as exc:
        fail(exc.message, diag.EXIT_UNREADABLE)
    plan = PlanArg("<stdin>", None) if file == STDIN else PlanArg(file, Path(file))
    try:
        text = read_plan(plan)
    except Unreadable as exc:
        fail(f"{file}: {exc.reason}", diag.EXIT_UNREADABLE)
    title = "plan" if plan.path is None else display.text(plan.path.name)
    try:
        with Engine.create(
            choose_executor(engine, frontend=frontend), frontend, extra_entries=[PICTURES_ENTRY]
        ) as eng:
            picture = draw(eng, text, title=title, node=node, expand=expand, fmt=chosen)
    except WerkbaumError as exc:
        fail(f"{file}: {exc.message}", diag.EXIT_UNREADABLE)
    if output is None:
        write_picture(picture, sys.stdout.buffer)  # a failure is the command line's (exit 2)
        return
    try:
        with output.open("wb") as stream:
            write_picture(picture, stream)
    except OSError as exc:
        fail(f"{output}: {exc.strerror or exc}", diag.EXIT_UNREADABLE)


@app.command(context_settings=CONTEXT, short_help="Copy a shared document into a file.")
@click.argument("document", metavar="DOCUMENT")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False))
@click.option(
    "--git-commit/--no-git-commit",
    default=False,
    help="Commit FILE (only it) with who changed what, unless it is committed as is.",
)
@click.option(
    "--server",
    "servers",
    multiple=True,
    metavar="URL",
    help="Werkbaum backend for a bare document uuid (repeatable; the first counts).",
)
@version("werkbaum")
def mirror(document: str, file: str, git_commit: bool, servers: Sequence[str]) -> None:
    """Copy a shared document into FILE, for a cron job.

    DOCUMENT is a document URL, the editor's ?live= share link, or a bare
    uuid (with --server). FILE is written only if it differs from the
    server's text. Exit status: 0 written, committed, unchanged or skipped
    (git archives a newer version already); 1 the document could not be
    fetched; 2 bad arguments; 3 writing FILE or git failed.

    \b
    Examples:
      werkbaum mirror https://werkbaum.example.org/api/v1/documents/UUID plan.werkbaum
      werkbaum mirror --server https://werkbaum.example.org UUID plan.werkbaum --git-commit
    """
    from werkbaum_core.stores.documents import DocumentStore
    from werkbaum_stdio.mirror import Mirror

    try:
        store = DocumentStore(list(servers))
    except WerkbaumError as exc:
        fail(exc.message, EXIT_MIRROR_USAGE)
    with store:
        try:
            job = Mirror.create(document, Path(file), store, None, git=git_commit)
        except WerkbaumError as exc:
            fail(exc.message, EXIT_MIRROR_USAGE)
        outcome = job.sync(None)
    if not outcome.ok:
        code = EXIT_MIRROR_FETCH if outcome.stage == "fetch" else EXIT_MIRROR_GIT
        fail(outcome.error or "mirror failed", code)
    click.echo(display.terminal(outcome.describe()))


def main() -> None:
    """Console entry point of ``werkbaum``: a bad argument is one line on stderr, exit 2."""
    run(app, "werkbaum", human=True)
