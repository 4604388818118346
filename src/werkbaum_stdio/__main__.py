"""``python -m werkbaum_stdio`` starts the stdio MCP server (same as ``werkbaum-mcp``)."""

from werkbaum_stdio.server_cli import main

main()
