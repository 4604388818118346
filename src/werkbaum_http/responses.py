"""The one way this server's own ASGI layers answer: a complete response in two messages."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.types import Send

JSON = b"application/json"
TEXT = b"text/plain; charset=utf-8"


async def respond(
    send: Send,
    status: int,
    body: bytes,
    headers: Sequence[tuple[bytes, bytes]] = (),
    content_type: bytes = JSON,
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *headers,
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
