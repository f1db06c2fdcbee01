"""How a hook finds the ``prism serve`` of its own store, and proves it is allowed to ask it.

``prism serve`` on a SQLite store writes a discovery file beside the store,
``<store>.serve.json`` (for PostgreSQL: ``serve-<hash of the URL>.json`` in the user data
directory), created with mode 0600 and holding the server's loopback URL, its process id,
the store it serves and a random token made at start. A hook resolves its store as it always
does (flag, ``PRISM_DB``/``PRISM_DATABASE_URL``, default file), reads the file beside it, and
sends the token as ``Authorization: Bearer`` to ``POST /v1/hooks/claude-code`` together with
the store it means; the server answers only the token it made and only for its own store.

The hook trusts a file only if this user owns it, nobody else may read or write it, its URL is
a loopback address and its process is alive; anything else is no server (the hook answers
in-process). The server removes the file when it stops, if the file is still its own.

Light on purpose (no pydantic, no numpy, no dataclasses): the hook's fast path imports it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Final, NamedTuple

SUFFIX: Final = ".serve.json"
TOKEN_PREFIX: Final = "prism_hook_"
FILE_MAX_BYTES: Final = 4_096
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "::1"})


class Discovery(NamedTuple):
    """A running server's address for one store, and the token it accepts."""

    host: str
    port: int
    token: str
    store: str
    pid: int

    def to_dict(self) -> dict[str, object]:
        return {
            "host": self.host,
            "port": self.port,
            "token": self.token,
            "store": self.store,
            "pid": self.pid,
        }


def store_identity(db: Path, database_url: str | None) -> str:
    """The name both sides give the store: the SQLite file's resolved path, or a digest of the
    PostgreSQL URL (the URL may hold a password; the file keeps only its digest)."""
    if database_url:
        import hashlib  # here: a SQLite hook never needs it

        return "postgresql:" + hashlib.sha256(database_url.encode()).hexdigest()[:32]
    return str(db.expanduser().resolve())


def discovery_path(db: Path, database_url: str | None) -> Path:
    """Where the discovery file of the store is."""
    if database_url:
        digest = store_identity(db, database_url).split(":", 1)[1]
        from platformdirs import user_data_path

        return user_data_path("prism-memory", appauthor=False) / f"serve-{digest}.json"
    resolved = db.expanduser().resolve()
    return resolved.with_name(resolved.name + SUFFIX)


def connect_host(bind: str) -> str | None:
    """The loopback address a hook reaches a server bound to ``bind`` at, or None when the
    server is not reachable on loopback (then no discovery file is written: the token would
    cross a network)."""
    if bind.startswith("127."):
        return bind
    if bind in ("localhost", "0.0.0.0", ""):
        return "127.0.0.1"
    if bind in ("::1", "::"):
        return "::1"
    return None


def publish(db: Path, database_url: str | None, host: str, port: int) -> Discovery:
    """Write the store's discovery file (mode 0600, atomically) with a new token.

    Raises:
        OSError: the folder cannot be written.
    """
    import secrets

    found = Discovery(
        host=host,
        port=port,
        token=TOKEN_PREFIX + secrets.token_urlsafe(32),
        store=store_identity(db, database_url),
        pid=os.getpid(),
    )
    path = discovery_path(db, database_url)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(found.to_dict(), handle)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return found


def withdraw(db: Path, database_url: str | None, token: str) -> None:
    """Remove the discovery file if it still holds ``token`` (another server of the same
    store may have replaced it since)."""
    path = discovery_path(db, database_url)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("token") == token:
        path.unlink(missing_ok=True)


def discover(db: Path, database_url: str | None) -> Discovery | None:
    """The server of this store, if a trustworthy discovery file names a live one."""
    path = discovery_path(db, database_url)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_mode & 0o077
            or info.st_size > FILE_MAX_BYTES
        ):
            return None  # not ours alone: someone else could have written it
        raw = os.read(fd, FILE_MAX_BYTES)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
        found = Discovery(
            host=str(data["host"]),
            port=int(data["port"]),
            token=str(data["token"]),
            store=str(data["store"]),
            pid=int(data["pid"]),
        )
    except (ValueError, TypeError, KeyError):
        return None
    if found.host not in LOOPBACK_HOSTS and not found.host.startswith("127."):
        return None
    if found.store != store_identity(db, database_url) or not _alive(found.pid):
        return None
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process of this user (signal 0 checks without sending)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return False  # alive, but another user's: not the server that wrote our file
    except OSError:
        return False
    return True
