"""GitHub Actions workflow commands: each diagnostic becomes an annotation on the file.

``::error file=F,line=L,col=C,title=T::message``. The runner splits a command
at ``::`` and its properties at ``,`` and ``=`` after ``:``, so values are
escaped as the runner expects: in the message ``%``, CR and LF; in property
values also ``:`` and ``,`` (percent-encoded, which the runner decodes). A file name that
is not UTF-8 is given in its display form (:func:`display.text`), as the log is UTF-8.
The file is named as GitHub places it (:func:`places.workspace_path`): relative to the
workspace, without ``./``.
"""

from __future__ import annotations

from collections.abc import Sequence

from werkbaum_core import display
from werkbaum_stdio.diagnostics import Diagnostic
from werkbaum_stdio.formats.places import workspace_path


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic) -> str:
    properties = [f"file={escape_property(display.text(workspace_path(d.file)))}"]
    if d.line is not None:
        properties.append(f"line={d.line}")
        if d.column is not None:
            properties.append(f"col={d.column}")
    properties.append(f"title={escape_property('werkbaum ' + d.type)}")
    level = d.severity  # "error" or "warning", as Actions names them
    return f"::{level} {','.join(properties)}::{escape_data(display.text(d.message))}"


def render(diagnostics: Sequence[Diagnostic], colour: bool) -> str:
    return "".join(command(d) + "\n" for d in diagnostics)
