"""Running the HTTP API: bind checks, uvicorn's configuration, slow-client timeouts.

What stops a slow or idle client from holding the server (all settings, ``PRISM_HTTP_*``):

- request headers must arrive within ``http_header_timeout_s`` (10 s) of the connection
  opening or of the previous response — uvicorn has no such timer, so :func:`protocol`
  adds one to its h11 protocol; h11 also caps the header block at 64 KiB;
- a request body must arrive within ``http_body_timeout_s`` (30 s; else 408) and be at most
  ``max_body_bytes`` (256 KiB; else 413) — :class:`prism_memory.api.limits.BodyLimitMiddleware`;
- idle keep-alive connections close after ``http_keep_alive_s`` (5 s);
- at most ``http_max_connections`` (1,024) connections are open: a new one past that closes
  the connection that has waited longest for its next request's headers (idle or slow: it
  holds no request), so idle sockets can never lock out a client that sends a request; only
  when every connection is busy with a request is the new one closed;
- at most ``http_max_concurrency`` (128) requests — counted once their body has arrived —
  are answered at once; past it the answer is 503 ``overloaded`` in the one JSON error
  shape with ``Retry-After: 1`` (:class:`prism_memory.api.limits.ConcurrencyLimit`), except for
  ``/healthz`` and ``/readyz``, which are always answered;
- on SIGTERM/SIGINT uvicorn stops accepting, lets in-flight requests (and their writes)
  finish for up to ``http_shutdown_grace_s`` (30 s), then the caller closes the store.

The sync core runs in the event loop's worker threads only once a request is complete, so a
slow client holds a connection slot, never a worker.

The client address (per-address rate limits, the ``--insecure-local`` loopback check) is the
TCP peer's, unless the peer is one of ``http_trusted_proxies`` (addresses or CIDR networks;
none by default): then uvicorn takes the nearest untrusted address of ``X-Forwarded-For``
(and the scheme of ``X-Forwarded-Proto``). uvicorn's own default (trust ``127.0.0.1`` or
``FORWARDED_ALLOW_IPS``) is not used, so a local process cannot pose as any address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import socket
from typing import TYPE_CHECKING

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from prism_memory.api.access_log import logging_config
from prism_memory.settings import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI

H11_MAX_HEADER_BYTES = 65_536


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) means this machine only.

    A name counts only when every address it resolves to is a loopback address.
    """
    name = host.strip().strip("[]")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses
    )


def protocol(header_timeout_s: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a deadline for each request's headers and a cap on
    open connections that evicts the longest-waiting idle one (see the module docstring)."""

    class HeaderDeadlineH11(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _waiting_since = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()
            if len(self.connections) > max_connections:
                self._make_room()

        def _idle(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _make_room(self) -> None:
            idle = [
                c
                for c in self.connections
                if c is not self and isinstance(c, HeaderDeadlineH11) and c._idle()
            ]
            victim = min(idle, key=lambda c: c._waiting_since) if idle else self
            victim.transport.close()

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a request's headers are complete
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # before super(): it may start a pipelined request (which disarms)
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._waiting_since = self.loop.time()
            self._deadline = self.loop.call_later(header_timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineH11


def build_server(
    app: FastAPI, settings: Settings, *, log_level: str = "info", access_log: bool = True
) -> uvicorn.Server:
    """A uvicorn server for ``app`` with Prism's limits (see the module docstring).

    With ``settings.log_format == "json"`` every log line is a JSON object and uvicorn's
    text access log gives way to the app's own (:mod:`prism_memory.api.access_log`).
    """
    json_logs = settings.log_format == "json"
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol(settings.http_header_timeout_s, settings.http_max_connections),
        lifespan="on",
        log_level=log_level,
        access_log=access_log and not json_logs,
        log_config=logging_config(log_level) if json_logs else uvicorn.config.LOGGING_CONFIG,
        server_header=False,
        timeout_keep_alive=settings.http_keep_alive_s,
        timeout_graceful_shutdown=settings.http_shutdown_grace_s,
        # Not uvicorn's limit_concurrency: it counts idle connections as load and answers a
        # plain-text 503 (see ConcurrencyLimit and the connection cap above).
        limit_concurrency=None,
        h11_max_incomplete_event_size=H11_MAX_HEADER_BYTES,
        # X-Forwarded-For/-Proto only from the proxies named in PRISM_HTTP_TRUSTED_PROXIES;
        # none by default (uvicorn's own default trusts 127.0.0.1 and FORWARDED_ALLOW_IPS).
        proxy_headers=bool(settings.http_trusted_proxies),
        forwarded_allow_ips=settings.http_trusted_proxies or [],
    )
    return uvicorn.Server(config)


def run(server: uvicorn.Server) -> None:
    """Serve until SIGTERM or SIGINT, then return once the graceful shutdown is done.

    uvicorn re-raises the signal it caught after shutting down; with the default handlers
    that would kill the process before the caller closes the store. No-op handlers (set here,
    restored after) absorb it, so ``prism serve`` closes the store and exits 0.
    """
    absorbed = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, _absorb) for sig in absorbed}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _absorb(signum: int, frame: object) -> None:
    """Absorb the signal uvicorn re-raises after its graceful shutdown."""
