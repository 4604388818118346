"""The HTTP load client for goal 4, run as its own process (``python -m bench.load``).

It reads one JSON job from stdin and prints one JSON result line:

- ``clients`` tasks, each sending ``calls`` ``werkbaum_inspect`` calls one after
  another as raw 2026-07-28 JSON-RPC POSTs (per-request ``_meta`` and the
  ``Mcp-Method``/``Mcp-Name`` headers; no handshake), each task on its own
  keep-alive connection (``connection``: ``keep-alive``), or on a new connection
  per call (``close``);
- ``mode`` ``source``: ``{"source": document}`` each call; ``text``: the
  document text plus a unique ``%%`` comment line, so every call is full JS work;
- meanwhile a prober sends ``GET /healthz`` every ``probe_interval_s``, each on
  a new connection as a load balancer's health check does, to show whether the
  event loop keeps answering.

HTTP/1.1 is spoken directly over asyncio streams: httpx cost ~13 ms of client
CPU per call here (its connection pool rescans every connection per response
event), as much as the server's own work, on a machine whose two cores the
client shares with the server. A response counts as a failure unless it is
200 with ``structuredContent`` and without ``"isError":true``; bodies are not
parsed. Everything stops at the call count or ``deadline_s``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any
from urllib.parse import urlsplit

MODERN = "2026-07-28"
PROBE_LIMIT = 20_000


def body(arguments: dict[str, Any], request_id: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "werkbaum_inspect",
                "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {
                        "name": "werkbaum-bench",
                        "version": "1",
                    },
                },
            },
        },
        ensure_ascii=False,
    ).encode()


class Connection:
    """One HTTP/1.1 connection; reopened when the server closes it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, head: bytes, payload: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(head + payload)
        await self.writer.drain()
        status_line, *lines = (await self.reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip().lower()
        if headers.get(b"transfer-encoding") == b"chunked":
            chunks = []
            while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
                chunks.append(await self.reader.readexactly(size + 2))
            await self.reader.readuntil(b"\r\n")
            content = b"".join(c[:-2] for c in chunks)
        else:
            content = await self.reader.readexactly(int(headers.get(b"content-length", b"0")))
        if headers.get(b"connection") == b"close":
            await self.close()
        return int(status_line.split()[1]), content

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()
        self.reader = self.writer = None


def succeeded(status: int, content: bytes) -> bool:
    return status == 200 and b'"structuredContent"' in content and b'"isError":true' not in content


async def run(job: dict[str, Any]) -> dict[str, Any]:
    parts = urlsplit(job["url"])
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    base_head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {job['token']}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\n"
        "Mcp-Method: tools/call\r\nMcp-Name: werkbaum_inspect\r\n"
        + ("Connection: close\r\n" if job["connection"] == "close" else "")
    )
    probe_head = f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    clients, calls = int(job["clients"]), int(job["calls"])
    deadline = time.monotonic() + float(job["deadline_s"])
    latencies: list[float] = []
    probes: list[float] = []
    statuses: dict[str, int] = {}
    failures = 0
    done = asyncio.Event()

    def arguments(k: int, j: int) -> dict[str, Any]:
        if job["mode"] == "source":
            return {"source": job["document"]}
        return {"text": f"{job['text']}%% load {job['nonce']} {k} {j}\n"}

    async def client(k: int) -> None:
        nonlocal failures
        connection = Connection(host, port)
        try:
            for j in range(calls):
                if time.monotonic() > deadline:
                    return
                payload = body(arguments(k, j), k * calls + j + 1)
                head = f"{base_head}Content-Length: {len(payload)}\r\n\r\n".encode()
                start = time.perf_counter()
                try:
                    status, content = await connection.request(head, payload)
                    ok, label = succeeded(status, content), str(status)
                except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                    await connection.close()
                    ok, label = False, type(exc).__name__
                latencies.append((time.perf_counter() - start) * 1000)
                if not ok:
                    failures += 1
                    statuses[label] = statuses.get(label, 0) + 1
        finally:
            await connection.close()

    async def prober() -> None:
        connection = Connection(host, port)
        try:
            while not done.is_set() and len(probes) < PROBE_LIMIT and time.monotonic() < deadline:
                start = time.perf_counter()
                status, _ = await connection.request(probe_head.encode())
                probes.append((time.perf_counter() - start) * 1000)
                if status != 200:
                    statuses[f"healthz {status}"] = statuses.get(f"healthz {status}", 0) + 1
                await asyncio.sleep(float(job["probe_interval_s"]))
        finally:
            await connection.close()

    cpu_start = time.process_time()
    probe = asyncio.create_task(prober())
    start = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    elapsed = time.perf_counter() - start
    done.set()
    await probe
    return {
        "latencies_ms": latencies,
        "probes_ms": probes,
        "failures": failures,
        "statuses": statuses,
        "elapsed_s": elapsed,
        "planned": clients * calls,
        "client_cpu_s": time.process_time() - cpu_start,
    }


def main() -> None:
    job = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(run(job))))


if __name__ == "__main__":
    main()
