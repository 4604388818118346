"""``python -m werkbaum_http`` starts the HTTP MCP server (same as ``werkbaum-mcp-http``)."""

from werkbaum_http.cli import main

main()
