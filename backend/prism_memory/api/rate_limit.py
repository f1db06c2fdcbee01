"""Rate limits per API key and, for requests without a valid key, per client address.

Counting is the ``limits`` library's moving window (``MovingWindowRateLimiter``) over the
storage ``http_rate_limit_storage`` names: ``memory://`` (the default) counts in this
process, so N server processes behind one balancer allow up to N times the limit; a shared
storage such as ``redis://host:6379`` (``pip install redis``) makes every process count
against the same windows.

- Per key: every request that presents a valid key (``/v1``, ``/mcp``, console pages) costs
  one hit of ``http_rate_limit`` (default ``30/second;600/minute``: a burst and a sustained
  rate) against that key, checked right after the key is looked up
  (:meth:`RateLimits.charge_key`).
- Per address: requests to ``/v1`` and ``/mcp`` with no ``Authorization`` header, console
  sign-in attempts, and every request answered 401 cost one hit of
  ``http_rate_limit_anonymous`` (default ``60/minute``) against the client address; once
  that window is spent, the address gets 429 for every request but the probes until it
  frees up — guessing keys is throttled (:class:`AnonymousRateLimit`).
- ``/healthz``, ``/readyz`` and ``/metrics`` are never limited.

A refused request is answered 429 in the one error shape with ``Retry-After`` (seconds) and
counted in ``prism_http_rate_limited_total{scope}``.
"""

from __future__ import annotations

import contextlib
import math
import time

from limits import RateLimitItem, parse_many
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from prometheus_client import Counter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prism_memory.api.errors import error_response
from prism_memory.errors import RateLimited

UNLIMITED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def parse_rate(spec: str) -> list[RateLimitItem]:
    """``"600/minute"`` (or ``"10/second;600/minute"``) as limits items; empty: no limit.

    Raises:
        ValueError: not a rate limit string.
    """
    return parse_many(spec) if spec.strip() else []


class RateLimits:
    """The server's two limiters over one storage.

    Args:
        per_key: the per-key limit string (empty: unlimited).
        per_address: the limit string for requests without a valid key (empty: unlimited).
        storage_uri: a ``limits`` storage URI (``memory://``, ``redis://...``).
        refused: the counter of refused requests (label ``scope``: key or address).
    """

    def __init__(self, per_key: str, per_address: str, storage_uri: str, refused: Counter) -> None:
        self.per_key = parse_rate(per_key)
        self.per_address = parse_rate(per_address)
        self.limiter = MovingWindowRateLimiter(storage_from_string(storage_uri))
        self.refused = refused

    def charge_key(self, key_id: str) -> None:
        """One request of the key ``key_id``.

        Raises:
            RateLimited: the key's window is spent.
        """
        self._charge(self.per_key, "key", key_id)

    def charge_address(self, address: str) -> None:
        """One request without a valid key from ``address``.

        Raises:
            RateLimited: the address's window is spent.
        """
        self._charge(self.per_address, "address", address)

    def address_spent(self, address: str) -> RateLimited | None:
        """The refusal for ``address`` if its window is already spent (costs nothing)."""
        for item in self.per_address:
            if not self.limiter.test(item, "address", address):
                return self._refusal(item, "address", address)
        return None

    def _charge(self, items: list[RateLimitItem], scope: str, who: str) -> None:
        for item in items:
            if not self.limiter.hit(item, scope, who):
                raise self._refusal(item, scope, who)

    def _refusal(self, item: RateLimitItem, scope: str, who: str) -> RateLimited:
        self.refused.labels(scope).inc()
        reset = self.limiter.get_window_stats(item, scope, who).reset_time
        retry = max(1, math.ceil(reset - time.time()))
        return RateLimited(f"rate limit of {item} per {scope} reached; retry later", retry)


class AnonymousRateLimit:
    """ASGI middleware: the per-address limit (see the module docstring).

    Args:
        app: the wrapped app.
        limits: the server's limiters.
    """

    def __init__(self, app: ASGIApp, limits: RateLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not self.limits.per_address or path in UNLIMITED_PATHS:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        charged = _anonymous(scope)
        try:
            refused = self.limits.address_spent(address)
            if refused is None and charged:
                self.limits.charge_address(address)
        except RateLimited as exc:
            refused = exc
        if refused is not None:
            await error_response(refused)(scope, receive, send)
            return

        async def count_401(message: Message) -> None:
            start = message["type"] == "http.response.start"
            if start and message["status"] == 401 and not charged:
                # This answer is already a refusal; a spent window refuses the next request.
                with contextlib.suppress(RateLimited):
                    self.limits.charge_address(address)
            await send(message)

        await self.app(scope, receive, count_401)


def _anonymous(scope: Scope) -> bool:
    """A request that costs an address hit up front: no key on /v1 or /mcp, or a sign-in."""
    path, method = scope.get("path", ""), scope.get("method", "")
    if path == "/signin" and method == "POST":
        return True
    if not (path.startswith("/v1") or path == "/mcp"):
        return False
    return not any(name == b"authorization" for name, _ in scope.get("headers", ()))
