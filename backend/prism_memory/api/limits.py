"""Request limits enforced before any parsing: body size (413), body arrival time (408),
and how many requests are answered at once (503).

:class:`BodyLimitMiddleware` reads a request body up to ``max_bytes`` within ``timeout_s``,
answers 413/408 itself when either is exceeded, and otherwise replays the body to the app.
Bodies are small (256 KiB by default), so holding one in memory is cheap, and it means no
route — the API's or the mounted MCP app's — ever sees an unbounded body.

:class:`ConcurrencyLimit` sits inside it: only requests whose body has fully arrived count
against ``http_max_concurrency``, so slow or idle clients never take a request slot.
"""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prism_memory.api.errors import error_response
from prism_memory.errors import Overloaded, PrismError, RequestTimeout, TooLarge

# Answered even at the concurrency limit: a liveness or readiness probe must not fail (and
# get a busy server restarted) because the server is busy.
PROBE_PATHS = frozenset({"/healthz", "/readyz"})


class BodyLimitMiddleware:
    """Bounds every HTTP request body in size and in arrival time.

    Args:
        app: the wrapped application.
        max_bytes: the largest body accepted.
        timeout_s: how long the whole body may take to arrive.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        if length is None and not chunked:
            await self.app(scope, receive, send)
            return
        try:
            if length is not None and int(length) > self.max_bytes:
                raise self._too_large()
            body, tail = await self._read(receive)
        except PrismError as exc:
            await error_response(exc)(scope, receive, send)
            return
        except ValueError:
            await error_response(TooLarge("malformed Content-Length"))(scope, receive, send)
            return
        await self.app(scope, _replay(body, tail, receive), send)

    async def _read(self, receive: Receive) -> tuple[bytes, Message | None]:
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(self.timeout_s):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return b"".join(chunks), message  # e.g. the client went away
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise self._too_large()
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks), None
        except TimeoutError:
            raise RequestTimeout(
                f"the request body did not arrive within {self.timeout_s:g} s"
            ) from None

    def _too_large(self) -> TooLarge:
        return TooLarge(
            f"the request body is larger than {self.max_bytes} bytes", max_bytes=self.max_bytes
        )


class ConcurrencyLimit:
    """At most ``max_requests`` requests in the app at once; past it, 503 ``overloaded``.

    The refusal is the one JSON error shape with ``Retry-After: 1``; ``/healthz`` and
    ``/readyz`` are answered regardless (and not counted).

    Args:
        app: the wrapped application.
        max_requests: requests answered at once.
    """

    def __init__(self, app: ASGIApp, max_requests: int) -> None:
        self.app = app
        self.max_requests = max_requests
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in PROBE_PATHS:
            await self.app(scope, receive, send)
            return
        if self.active >= self.max_requests:
            refusal = Overloaded(
                f"the server is answering {self.max_requests} requests at once; retry shortly"
            )
            await error_response(refusal)(scope, receive, send)
            return
        self.active += 1  # one event loop: no lock needed between check and increment
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


def _replay(body: bytes, tail: Message | None, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            if tail is not None:
                return tail
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
