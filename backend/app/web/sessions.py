"""Console sessions and the headers every console response carries.

The API key never reaches the browser after sign-in: the browser holds only a random session
id in a session cookie (``HttpOnly``, ``SameSite=Strict``, ``Secure`` over https, no expiry so
it dies with the browser session); the key lives in this process's memory, so a restart signs
everyone out. Each session also holds its CSRF token, which every state-changing form echoes
(a session-bound synchroniser token, compared in constant time).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "prism_console"
SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 10_000
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
)


@dataclass
class ConsoleSession:
    """One browser's session: its API key secret (``None`` until sign-in) and CSRF token."""

    sid: str
    csrf: str
    secret: str | None = None
    created: float = field(default_factory=time.monotonic)

    def csrf_ok(self, token: str | None) -> bool:
        """Whether a form's token is this session's (constant-time)."""
        return token is not None and hmac.compare_digest(token.encode(), self.csrf.encode())


class SessionStore:
    """In-memory sessions, oldest evicted first beyond ``MAX_SESSIONS``; thread-safe."""

    def __init__(self, ttl_s: float = SESSION_TTL_S, max_sessions: int = MAX_SESSIONS) -> None:
        self._ttl = ttl_s
        self._max = max_sessions
        self._items: OrderedDict[str, ConsoleSession] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, sid: str | None) -> ConsoleSession | None:
        """The live session of ``sid``, if any."""
        if not sid:
            return None
        with self._lock:
            found = self._items.get(sid)
            if found is not None and time.monotonic() - found.created > self._ttl:
                del self._items[sid]
                return None
            return found

    def create(self, secret: str | None = None) -> ConsoleSession:
        """A new session with fresh id and CSRF token (a sign-in always gets a new id)."""
        session = ConsoleSession(secrets.token_urlsafe(32), secrets.token_urlsafe(32), secret)
        with self._lock:
            self._items[session.sid] = session
            while len(self._items) > self._max:
                self._items.popitem(last=False)
        return session

    def drop(self, sid: str | None) -> None:
        """Forget a session (sign-out)."""
        if sid:
            with self._lock:
                self._items.pop(sid, None)


class SecurityHeaders:
    """ASGI middleware: the console's security headers on responses under ``prefixes``.

    Args:
        app: the wrapped app.
        prefixes: path prefixes of console pages (``"/"`` alone means exactly the root).
    """

    def __init__(self, app: ASGIApp, prefixes: Iterable[str]) -> None:
        self.app = app
        self.prefixes = tuple(prefixes)

    def _covers(self, path: str) -> bool:
        return path == "/" or any(p != "/" and path.startswith(p) for p in self.prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._covers(scope["path"]):
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [h for h in SECURITY_HEADERS if h[0] not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_secured)
