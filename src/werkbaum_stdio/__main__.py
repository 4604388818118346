"""``python -m werkbaum_stdio`` starts the stdio MCP server (same as ``werkbaum-mcp``)."""

from werkbaum_stdio.cli import server_main

server_main()
