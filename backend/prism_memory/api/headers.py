"""The security headers on every HTTP response: console pages, ``/v1``, ``/docs``, errors.

One policy for the whole server (``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``,
``nosniff``, no referrer, no caching), with one content security policy for everything but
``/docs``: Swagger UI's page starts the UI with one inline script (allowed by its hash, not
by ``'unsafe-inline'``) and sets inline styles and ``data:`` images.
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

STRICT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_COMMON: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def docs_csp(page_html: str) -> str:
    """The CSP for the Swagger UI page ``page_html``: its inline scripts by sha256."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(page_html)
    )
    return (
        f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP response.

    Args:
        app: the wrapped app.
        csp_by_path: a content security policy for exact paths (default: ``STRICT_CSP``).
    """

    def __init__(self, app: ASGIApp, csp_by_path: dict[str, str] | None = None) -> None:
        self.app = app
        self.csp_by_path = dict(csp_by_path or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = self.csp_by_path.get(scope["path"], STRICT_CSP).encode()
        extra = ((b"content-security-policy", csp), *_COMMON)

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                message["headers"] = headers + [h for h in extra if h[0] not in names]
            await send(message)

        await self.app(scope, receive, send_secured)
