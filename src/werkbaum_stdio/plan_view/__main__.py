"""``python -m werkbaum_stdio.plan_view [--html]``: the MCP App view's URI, size in bytes
and CSP (the figures README's "Pictures" section gives; a test compares them), or with
``--html`` the document itself, as ``resources/read`` returns it."""

from __future__ import annotations

import sys

from werkbaum_stdio.plan_view import plan_view
from werkbaum_stdio.registration import PLAN_VIEW_URI


def main(argv: list[str]) -> int:
    view = plan_view()
    if argv == ["--html"]:
        sys.stdout.buffer.write(view.html.encode("utf-8"))
        return 0
    if argv:
        print("usage: python -m werkbaum_stdio.plan_view [--html]", file=sys.stderr)
        return 2
    print(PLAN_VIEW_URI)
    print(f"{view.size:,} bytes")
    print(view.csp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
