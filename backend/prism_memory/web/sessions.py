"""Console sessions, and the sign-in form's stateless CSRF protection.

The API key never reaches the browser after sign-in: the browser holds only a random session
id in a session cookie (``HttpOnly``, ``SameSite=Strict``, ``Secure`` over https, no expiry so
it dies with the browser session); the key lives in this process's memory, so a restart signs
everyone out. Each session holds its CSRF token, which every state-changing form echoes (a
session-bound synchroniser token, compared in constant time).

No server-side session exists before a successful sign-in, so visitors cannot fill the store
and push signed-in operators out: the sign-in form (and, in ``--insecure-local`` mode where
nobody signs in, every form) is protected by a signed double-submit token — a random nonce in
its own strict cookie, and in the form the nonce's HMAC under a key this process drew at
start.

What one key opened no other key can end (DESIGN §10). Signed-in sessions count against the
key that signed in: beyond ``console_max_sessions_per_key``
(``PRISM_CONSOLE_MAX_SESSIONS_PER_KEY``) that key's own oldest session is signed out, never
another key's. When the whole store holds ``console_max_sessions``
(``PRISM_CONSOLE_MAX_SESSIONS``), expired sessions are dropped and, if it is still full, the
sign-in is refused (503) rather than signing anybody out. Sign-in attempts are also limited
per client address (``PRISM_HTTP_RATE_LIMIT_ANONYMOUS``, :mod:`prism_memory.api.rate_limit`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

COOKIE = "prism_console"
CSRF_COOKIE = "prism_console_csrf"
SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 10_000
MAX_SESSIONS_PER_KEY = 8


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


@dataclass
class ConsoleSession:
    """One signed-in browser: its API key secret, the key's id, its CSRF token, and how the
    header names the key (``shown``: id, role, tenant slug)."""

    sid: str
    csrf: str
    secret: str
    owner: str
    created: float = field(default_factory=time.monotonic)
    shown: str = ""

    def csrf_ok(self, token: str | None) -> bool:
        """Whether a form's token is this session's (constant-time)."""
        return _same(token, self.csrf)


class CsrfSigner:
    """Signed double-submit tokens for forms sent without a session (stateless)."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    @staticmethod
    def new_nonce() -> str:
        return secrets.token_urlsafe(32)

    def token(self, nonce: str) -> str:
        """The form token that goes with the cookie's ``nonce``."""
        return hmac.new(self._key, nonce.encode(), hashlib.sha256).hexdigest()

    def ok(self, nonce: str | None, token: str | None) -> bool:
        """Whether a form's ``token`` was signed here for the cookie's ``nonce``."""
        return bool(nonce) and _same(token, self.token(nonce or ""))


class ConsoleFull(Exception):
    """The console holds as many signed-in sessions as it may; nobody is signed out for more."""


class SessionStore:
    """In-memory signed-in sessions, capped per key and in all; thread-safe.

    Args:
        ttl_s: a session's lifetime.
        max_sessions: signed-in sessions in all (then sign-ins are refused).
        max_per_key: signed-in sessions of one key (then that key's oldest is signed out).
    """

    def __init__(
        self,
        ttl_s: float = SESSION_TTL_S,
        max_sessions: int = MAX_SESSIONS,
        max_per_key: int = MAX_SESSIONS_PER_KEY,
    ) -> None:
        self._ttl = ttl_s
        self._max = max_sessions
        self._max_per_key = max_per_key
        self._items: OrderedDict[str, ConsoleSession] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, sid: str | None) -> ConsoleSession | None:
        """The live session of ``sid``, if any."""
        if not sid:
            return None
        with self._lock:
            found = self._items.get(sid)
            if found is not None and self._expired(found):
                del self._items[sid]
                return None
            return found

    def create(self, secret: str, owner: str) -> ConsoleSession:
        """A new signed-in session of the key ``owner`` (called after sign-in only).

        Raises:
            ConsoleFull: the store is full of live sessions (none of them is dropped).
        """
        session = ConsoleSession(
            secrets.token_urlsafe(32), secrets.token_urlsafe(32), secret, owner
        )
        with self._lock:
            own = [s.sid for s in self._items.values() if s.owner == owner]
            for sid in own[: max(0, len(own) - self._max_per_key + 1)]:
                del self._items[sid]  # the key's own oldest, never another key's
            if len(self._items) >= self._max:
                for sid in [s.sid for s in self._items.values() if self._expired(s)]:
                    del self._items[sid]
            if len(self._items) >= self._max:
                raise ConsoleFull(f"the console holds {self._max} signed-in sessions")
            self._items[session.sid] = session
        return session

    def drop(self, sid: str | None) -> None:
        """Forget a session (sign-out)."""
        if sid:
            with self._lock:
                self._items.pop(sid, None)

    def _expired(self, session: ConsoleSession) -> bool:
        return time.monotonic() - session.created > self._ttl
