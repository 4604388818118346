"""werkbaum_http: the remote MCP server — Streamable HTTP, bearer token, shared documents only.

The second thin adapter over ``werkbaum_core``: it registers the same catalogue
as the stdio server (through :mod:`werkbaum_stdio.registration`) over the
documents store alone, stateless, so any worker or replica can answer any
request. Modules, one job each: ``config`` (settings and tokens from the
environment), ``engine`` (which executor serves HTTP), ``sources`` (documents
only), ``server`` (the MCP servers), ``auth`` (bearer tokens), ``hosts`` (the
Host/Origin allowlist), ``limits`` (the MCP endpoint: POST only, whole bodies,
the per-worker call cap), ``responses`` (how these layers answer),
``connections`` (uvicorn's protocol with deadlines and a connection cap),
``access`` (an access log without query strings), ``app`` (the ASGI app
factory), ``cli`` (``werkbaum-mcp-http``).
"""
