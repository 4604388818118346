"""The MCP App view of ``werkbaum_inspect``: one HTML document, built from the JS sources.

A host with MCP Apps shows it in a sandboxed frame next to the tool call and
hands it the call's result; the page draws that result with ``diagram.js``,
the module ``werkbaum render`` draws with, so the chat shows the same picture
as the CLI. The document is assembled here when first asked for (once per
process): ``view.js`` (the host bridge) and the modules it imports, bundled
into one inline script by :mod:`.bundle`, in the shell ``view.html``. Nothing
is generated ahead of time, so the JS files stay the only source.

The view always uses the bundled modules, also when a server loads a
checkout's (``--frontend``): the page is this package's code, and it only
draws what the engine computed (of ``model.js`` it uses the fold rule).

The document's own Content-Security-Policy allows exactly its one script (by
its SHA-256), inline styles (the picture's ``<style>``) and nothing else: no
fetch, image, font, frame, form or base URL. A host's CSP comes on top of it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from html import escape
from importlib import resources
from string import Template

import attrs

from werkbaum_core.__version__ import __version__
from werkbaum_core.engine.modules import bundled_dir
from werkbaum_stdio.plan_view.bundle import classic_script, in_dependency_order

ENTRY = "view.js"
SHELL = "view.html"


@attrs.frozen
class PlanView:
    """The view's HTML document and the CSP it carries."""

    html: str
    csp: str

    @property
    def size(self) -> int:
        """The document's length in bytes (UTF-8), as a host receives it."""
        return len(self.html.encode("utf-8"))


def view_csp(script: str) -> str:
    """The document's policy: its one inline script by hash, inline styles, nothing else
    (ASCII without ``"``, ``<`` or ``&``: it goes into the shell's ``content="…"`` as is)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "base-uri 'none'; form-action 'none'"
    )


def module_source(name: str) -> str:
    """A module's source: the view's own from this package, the others from the core's."""
    here = resources.files(__package__ or "werkbaum_stdio.plan_view")
    path = here.joinpath(name) if name == ENTRY else bundled_dir() / name
    return path.read_text(encoding="utf-8")


@functools.cache
def plan_view() -> PlanView:
    """The view, built from the JS sources on first use."""
    script = classic_script(in_dependency_order(ENTRY, module_source))
    csp = view_csp(script)
    shell = resources.files(__package__ or "werkbaum_stdio.plan_view").joinpath(SHELL)
    html = Template(shell.read_text(encoding="utf-8")).substitute(
        version=escape(__version__), csp=csp, script=script
    )
    return PlanView(html, csp)
