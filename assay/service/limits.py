"""A cap on the size of every request body, enforced before the application reads it.

Starlette's multipart parser writes an uploaded file to a temporary file before a handler sees
it, and ``request.json()`` reads a body of any size into memory, so a check in the handler
(:func:`assay.service.jobs.read_upload`) comes after the cost. :class:`BodyLimit` is a pure
ASGI middleware in front of the application: a request whose ``Content-Length`` exceeds the cap
is answered 413 before a byte of its body is read; a body without a length (chunked) is counted
as it streams, and the first chunk past the cap ends it with the same 413 (the handler has then
written nothing: the body is read in full before any handler acts on it). The cap is the
largest upload (:data:`assay.service.jobs.MAX_UPLOAD_BYTES`, read per request) plus
:data:`OVERHEAD` for the form's other fields and multipart framing.

>>> body_cap(1000)
1049576
"""
from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

OVERHEAD = 1024 * 1024          # form fields and multipart boundaries around the largest upload

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def body_cap(max_upload: int | None = None) -> int:
    """The largest request body accepted, in bytes."""
    if max_upload is None:
        from assay.service import jobs
        max_upload = jobs.MAX_UPLOAD_BYTES
    return int(max_upload) + OVERHEAD


class TooLarge(Exception):
    """The body streamed past the cap."""


class BodyLimit:
    """ASGI middleware: 413 with one line for a request body larger than :func:`body_cap`."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = body_cap()
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > cap):
            await _refuse(scope, send, cap)
            return
        seen, started = 0, False

        async def counted() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > cap:
                    raise TooLarge()
            return msg

        async def watched(msg: Message) -> None:
            nonlocal started
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, counted, watched)
        except TooLarge:
            if not started:
                await _refuse(scope, send, cap)


async def _refuse(scope: Scope, send: Send, cap: int) -> None:
    text = f"request body too large: at most {cap:,} bytes (a submission file at most " \
           f"{cap - OVERHEAD:,} bytes)"
    api = scope.get("path", "").startswith("/api/")
    body = (json.dumps({"error": text}) if api else text + "\n").encode()
    ctype = b"application/json" if api else b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", ctype),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["BodyLimit", "OVERHEAD", "body_cap"]
