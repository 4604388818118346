"""What the product's three command lines share: ``werkbaum``, ``werkbaum-mcp`` and
``werkbaum-mcp-http``.

All three are click commands, so ``--help`` shows exactly the metavariables and
examples written at each option, ``-h`` is ``--help`` and ``--version`` prints
``PROG VERSION``. A bad argument reads the same everywhere: one line on stderr
(``PROG: message; see PROG --help``) and exit 2. For ``werkbaum-mcp`` that
matters twice: its stdout is the JSON-RPC channel, so an error must never land
there, and an MCP host shows a server's stderr to people, where one clear line
beats a framed box.
"""

from __future__ import annotations

import logging
import re
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, NoReturn, TypeVar

import click

from werkbaum_core import __version__, display
from werkbaum_core.engine import EXECUTORS
from werkbaum_core.errors import WerkbaumError
from werkbaum_stdio import std_streams
from werkbaum_stdio.terminal import is_terminal

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
"""Context settings of every command: ``-h`` as well as ``--help``, at most 100 columns."""

_LINE_BREAK = re.compile(r"\s*\n\s*")
_SUGGESTION = re.compile(r"\. \(?Did you mean (.*?)\?\)?$")
"""click's "No such option '--x'. Did you mean '--y'?" (or "(Did you mean one of: …?)")."""


def version(prog: str) -> Callable[[F], F]:
    """``--version`` on a command: prints ``PROG VERSION`` and exits 0."""
    return click.version_option(
        __version__, "--version", prog_name=prog, message="%(prog)s %(version)s"
    )


def engine_options(func: F) -> F:
    """``--engine`` and ``--frontend``: which executor runs which notation modules.

    ``--engine`` names no click choice on purpose: an unknown name is refused
    where the engine starts, with the same one-line error as a
    ``WERKBAUM_ENGINE`` the user mistyped.
    """
    func = click.option(
        "--frontend",
        metavar="DIR",
        help="Load the notation modules from a Werkbaum checkout's frontend/src.",
    )(func)
    return click.option(
        "--engine",
        metavar="NAME",
        help="JS executor: auto (v8 if installed, else node, else dukpy) or one of "
        f"{', '.join(EXECUTORS)}; default: $WERKBAUM_ENGINE, else auto.",
    )(func)


def fail(message: str, code: int, prog: str = "werkbaum") -> NoReturn:
    """One line on stderr, ``PROG: message``, then exit with ``code``.

    The message names files and values as given (a file name may hold a newline, an
    escape sequence or bytes that are not UTF-8), so it is printed in its terminal form
    (:func:`display.terminal`): one line, nothing a terminal would act on.
    """
    click.echo(f"{prog}: {display.terminal(message)}", err=True)
    sys.exit(code)


def probe_backends(
    servers: Sequence[str], prog: str, code: int, *, allow_any_host: bool = True
) -> None:
    """``GET /api/v1/info`` on every backend before serving: a mistyped or unreachable
    backend is one line on stderr and exit ``code`` at start-up, not a failure of an
    agent's first call."""
    from werkbaum_core.stores import documents

    # Its retries are not news here: the probe ends in the one line below if they fail.
    quiet = logging.getLogger(documents.__name__)
    level = quiet.level
    quiet.setLevel(max(level, logging.ERROR))
    try:
        with documents.DocumentStore(servers, allow_any_host=allow_any_host) as store:
            store.probe()
    except WerkbaumError as exc:
        fail(exc.message, code, prog)
    finally:
        quiet.setLevel(level)


EXIT_INTERRUPTED = 130
"""Ctrl-C: 128 + SIGINT, as shells report a command that SIGINT ended."""


class Interrupted(BaseException):
    """Ctrl-C in the human command line. Not :class:`KeyboardInterrupt`, which click
    answers with a blank line of its own (and then exit 1, a broken plan's status)."""


def _interrupted(signum: int, frame: object) -> NoReturn:
    raise Interrupted


def run(command: click.Command, prog: str, *, human: bool = False) -> NoReturn:
    """Run ``command`` as the console script ``prog`` and exit with its status.

    click's own error output is a usage line plus an ``Error:`` line; here a bad
    argument is one line naming the command and where help is, exit 2. An output that
    cannot be written (``--help > /dev/full``, a closed stderr) is one line and exit 2
    as well (:mod:`std_streams`), and a closed standard descriptor is held, so that a
    server's pipes or files never take its number. With ``human`` (``werkbaum``):
    Ctrl-C is one line and exit 130; the servers keep SIGINT as a stop signal.
    """
    std_streams.guard()
    if human:
        signal.signal(signal.SIGINT, _interrupted)
    try:
        try:
            code = command.main(prog_name=prog, standalone_mode=False)
            std_streams.flush()
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
            code = exc.exit_code
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else prog
            message = _LINE_BREAK.sub(" ", exc.format_message().strip())
            message = _SUGGESTION.sub(lambda m: f" (did you mean {m[1]}?)", message).rstrip(".")
            click.echo(f"{where}: {display.terminal(message)}; see {where} --help", err=True)
            code = exc.exit_code
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code, prog)
        except (click.exceptions.Abort, Interrupted):
            _aborted(prog)
        except SystemExit as exc:
            std_streams.flush()  # what the command wrote before its exit status
            raise exc
    except std_streams.OutputFailed as exc:
        _last_words(prog, str(exc))
    except Interrupted:  # while the output was written
        _aborted(prog)
    sys.exit(code if isinstance(code, int) else 0)


def _aborted(prog: str) -> NoReturn:
    """Ctrl-C: "PROG: aborted", on a line of its own after the terminal's ``^C`` echo."""
    start = "\n" if is_terminal(sys.stderr) else ""
    _last_words(prog, "aborted", start, EXIT_INTERRUPTED)


def _last_words(prog: str, message: str, start: str = "", code: int = 2) -> NoReturn:
    """One line on stderr if it can still be written, then exit ``code``."""
    with suppress(std_streams.OutputFailed, OSError):
        click.echo(f"{start}{prog}: {message}", err=True)
        std_streams.flush()
    sys.exit(code)
