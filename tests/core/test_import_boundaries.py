"""The architecture of spec §2, enforced: the rules layer is pure, the core never
imports MCP or a transport, and the adapters do not reach into each other's stores."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SRC = REPO / "src"
RULES_LAYER = [
    *sorted((SRC / "werkbaum_core" / "rules").glob("*.py")),
    SRC / "werkbaum_core" / "model.py",
    SRC / "werkbaum_core" / "convert.py",
    SRC / "werkbaum_core" / "errors.py",
    SRC / "werkbaum_core" / "text.py",
    SRC / "werkbaum_core" / "display.py",
    SRC / "werkbaum_core" / "stores" / "protocol.py",
    SRC / "werkbaum_core" / "stores" / "memory.py",
]
IO_MODULES = {
    "os",
    "io",
    "pathlib",
    "subprocess",
    "socket",
    "shutil",
    "tempfile",
    "urllib",
    "http",
    "httpx",
    "httpx2",
    "dukpy",
    "py_mini_racer",
    "tree_sitter",
    "asyncio",
    "anyio",
    "mcp",
    "starlette",
    "uvicorn",
}
EDGE_LAYER = (
    "werkbaum_core.engine",
    "werkbaum_core.stores.documents",
    "werkbaum_core.stores.sources",
)


def imported(path: Path, *, with_names: bool = False) -> set[str]:
    """The modules ``path`` imports; ``with_names``: ``from m import x`` gives ``m.x``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if with_names:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
            else:
                names.add(node.module)
    return names


@pytest.mark.parametrize("path", RULES_LAYER, ids=lambda p: str(p.relative_to(SRC)))
def test_rules_layer_imports_no_io_and_no_edge(path: Path) -> None:
    for name in imported(path):
        assert name.split(".")[0] not in IO_MODULES, f"{path.name} imports {name}"
        assert not name.startswith(EDGE_LAYER), f"{path.name} imports the edge layer: {name}"


def test_core_never_imports_mcp_or_an_adapter() -> None:
    for path in (SRC / "werkbaum_core").rglob("*.py"):
        for name in imported(path):
            top = name.split(".")[0]
            assert top not in {"mcp", "starlette", "uvicorn", "click"}, f"{path} imports {name}"
            assert top not in {"werkbaum_stdio", "werkbaum_http"}, f"{path} imports {name}"


def test_importing_the_whole_core_loads_no_mcp() -> None:
    probe = (
        "import sys, pkgutil, importlib, werkbaum_core\n"
        "for m in pkgutil.walk_packages(werkbaum_core.__path__, 'werkbaum_core.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'mcp', 'starlette', 'uvicorn', 'werkbaum_stdio', 'werkbaum_http'}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_http_adapter_has_no_file_store() -> None:
    for path in (SRC / "werkbaum_http").rglob("*.py"):
        for name in imported(path):
            assert name not in {
                "werkbaum_stdio.files",
                "werkbaum_stdio.mirror",
                "werkbaum_stdio.roots",
            }, f"{path} imports {name}: the remote server serves documents only"


SDK_PACKAGES = ("mcp", "mcp_types")
SDK_INTERNALS = (
    "mcp.server.mcpserver",  # the high-level server: the adapters are low-level servers
    "mcp.server.lowlevel",  # Server is public as mcp.server.Server; its helpers are not
    "mcp.server.runner",
    "mcp.server.session",
    "mcp.server.connection",
    "mcp.shared.dispatcher",
    "mcp.shared.jsonrpc_dispatcher",
)
"""SDK modules the adapters must not build on: the high-level server, whose tool and
resource classes ``registration.py`` once fed private pieces, and the machinery under the
low-level server."""
SDK_PRIVATE_ATTRIBUTES = (
    "_lowlevel_server",
    "_tool_manager",
    "_resource_manager",
    "_prompt_manager",
    "_request_handlers",
)


def sdk_imports(path: Path) -> set[str]:
    """Every SDK module and imported name of ``path``, dotted (``mcp.server.Server``)."""
    return {n for n in imported(path, with_names=True) if n.split(".")[0] in SDK_PACKAGES}


def test_the_adapters_use_only_the_public_sdk() -> None:
    for path in (*(SRC / "werkbaum_stdio").rglob("*.py"), *(SRC / "werkbaum_http").rglob("*.py")):
        for name in sdk_imports(path):
            private = [part for part in name.split(".") if part.startswith("_")]
            assert not private, f"{path.relative_to(SRC)} imports the private {name}"
            internal = [m for m in SDK_INTERNALS if name == m or name.startswith(m + ".")]
            assert not internal, f"{path.relative_to(SRC)} imports the SDK internal {name}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                assert node.attr not in SDK_PRIVATE_ATTRIBUTES, f"{path} reads .{node.attr}"
