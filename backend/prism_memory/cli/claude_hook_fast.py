"""``python -P -m prism_memory brief --hook claude-code [FLAGS]``: the hooks' fast path.

Claude Code waits for the ``UserPromptSubmit`` hook before the prompt reaches the model, for
``SubagentStart`` before a subagent starts, and for ``PreToolUse`` before a tool runs (a
file's first touch: a file touched before is answered here, from the session's briefed
state, before any server is looked for). Answered in-process, each call loads what the
whole CLI loads (click, pydantic, numpy, the store, onnxruntime and the embedding model for a
prompt). When a ``prism serve`` runs for the hook's store, this path asks it instead
(``POST /v1/hooks/claude-code``) and imports only the standard library and Prism's light
modules: the flags are parsed here, the context is resolved as the in-process path resolves
it, the store's discovery file gives the server and its token
(:mod:`prism_memory.services.local_serve`), and a plain socket carries one HTTP/1.1 request.

It falls back to the in-process path (:func:`prism_memory.cli.claude_hook.run`, through the
full CLI, with what is left of the deadline) whenever it cannot be sure of the answer: a flag
it does not know or a value out of range (the CLI says why), no discovery file or one it does
not trust, no server listening, a refusal (wrong token, another store, a bad request), or no
answer within ``PRISM_HOOK_SERVER_TIMEOUT`` seconds (default
:data:`SERVER_TIMEOUT_DEFAULT_S`). Either way it exits 0 and never blocks the session.
"""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, Final

from prism_memory.cli import claude_hook
from prism_memory.domain.contract.bounds import (
    TOKEN_BUDGET_DEFAULT,
    TOKEN_BUDGET_MAX,
    TOKEN_BUDGET_MIN,
    TOP_K_DEFAULT,
)
from prism_memory.services.hook_answers import (
    MIN_RELEVANCE_DEFAULT,
    PROMPT_RULES_DEFAULT,
    PROMPT_RULES_MAX,
    SUBAGENT_TOKEN_BUDGET_DEFAULT,
    TOUCH_RELEVANCE_DEFAULT,
    TOUCH_RULES_DEFAULT,
    TOUCH_RULES_MAX,
    HookAnswer,
)

HOOK_ARGS: Final = ("brief", "--hook", "claude-code")
SERVER_TIMEOUT_DEFAULT_S: Final = 1.0
SERVER_TIMEOUT_ENV: Final = "PRISM_HOOK_SERVER_TIMEOUT"
RESPONSE_MAX_BYTES: Final = 1_048_576
ROUTE: Final = "/v1/hooks/claude-code"
CONTEXT_FLAGS: Final = ("db", "database_url", "tenant", "project", "persona", "surface")
CONTEXT_FLAGS_MORE: Final = ("specialization", "session_id")
# flag: (low, high) for integers and numbers; None for text
HOOK_FLAGS: Final[dict[str, tuple[float, float] | None]] = {
    "token_budget": (TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
    "top_k": (1, 100),
    "min_relevance": (0.0, 1.0),
    "prompt_rules": (0, PROMPT_RULES_MAX),
    "subagent_token_budget": (TOKEN_BUDGET_MIN, TOKEN_BUDGET_MAX),
    "touch_rules": (0, TOUCH_RULES_MAX),
    "touch_relevance": (0.0, 1.0),
    "namespace": None,
    "deadline": None,
    "state_dir": None,
}
FRACTION_FLAGS: Final = frozenset({"min_relevance", "touch_relevance"})


class NoServer(Exception):
    """The server cannot answer this call; the message says why (on stderr, then fallback)."""


def main_fast(argv: list[str]) -> None:
    """Answer one hook call through the running server, else in-process. Never raises."""
    started = time.monotonic()
    if any(a in ("-h", "--help") for a in argv):
        _full(argv, None)
        return
    flags = parse_flags(argv)
    raw = sys.stdin.buffer.read(claude_hook.INPUT_MAX_BYTES + 1)
    if flags is None:
        _full(argv, raw)  # the CLI judges the flags, as it always did
        return
    deadline_s = claude_hook.seconds(
        flags.pop("deadline", None)
        or os.environ.get("PRISM_HOOK_DEADLINE")
        or str(claude_hook.HOOK_DEADLINE_DEFAULT_S),
        claude_hook.HOOK_DEADLINE_DEFAULT_S,
    )
    try:
        if ask_server(flags, raw, deadline_s):
            return
    except NoServer as exc:
        if str(exc):
            claude_hook.say(f"{exc}; answering in-process", "server")
    except claude_hook.HookSkipped as exc:  # the input itself says there is nothing to do
        claude_hook.say(str(exc))
        return
    except Exception as exc:  # fail open to the in-process path, which has its own deadline
        claude_hook.say(f"{type(exc).__name__}: {exc}; answering in-process", "server")
    left = max(0.1, deadline_s - (time.monotonic() - started))
    _full([*argv, "--deadline", f"{left:.3f}"], raw)


def parse_flags(argv: list[str]) -> dict[str, Any] | None:
    """The flags of ``prism brief --hook claude-code`` as values, or None when one is not a
    flag this path knows or its value is not valid (the full CLI then says why)."""
    known = {*CONTEXT_FLAGS, *CONTEXT_FLAGS_MORE, *HOOK_FLAGS}
    out: dict[str, Any] = {}
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        name, eq, value = word.partition("=")
        key = name[2:].replace("-", "_") if name.startswith("--") else ""
        if key not in known:
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        bounds = HOOK_FLAGS.get(key)
        if bounds is not None:
            try:
                number: float = float(value) if key in FRACTION_FLAGS else int(value)
            except ValueError:
                return None
            if not bounds[0] <= number <= bounds[1]:
                return None
            out[key] = number
        else:
            out[key] = value
    return out


def ask_server(flags: dict[str, Any], raw: bytes, deadline_s: float) -> bool:
    """Answer the call through the store's running server; True when answered (the output,
    or nothing and why, is written).

    Raises:
        NoServer: no trustworthy server for the store, or it did not answer in time.
        HookSkipped: the hook input is not one to answer (as in-process), or a file the
            session touched before (known before the server is looked for).
    """
    from prism_memory.services.briefed_state import BriefedState, default_state_dir
    from prism_memory.services.project_config import (
        find_project_config,
        session_uuid,
        with_project_config,
    )

    data = claude_hook.read_input(raw)
    hook = _hook_options(flags, deadline_s)
    state_dir = flags.get("state_dir") or os.environ.get("PRISM_HOOK_STATE_DIR")
    state = BriefedState(Path(state_dir) if state_dir else default_state_dir())
    claude_session = session_uuid(claude_hook.CLIENT, data["session_id"])
    if data["hook_event_name"] == "PreToolUse":  # a file touched before: nothing to ask
        asked_in = claude_hook.given_session(flags.get("session_id"), claude_session)
        if asked_in is not None:
            claude_hook.first_touch(data, hook, asked_in, state)
    from prism_memory.locations import store_location
    from prism_memory.services import local_serve

    db, url = store_location(flags)
    server = local_serve.discover(db, url)
    if server is None:
        raise NoServer("")  # the usual case without a server: say nothing
    options = {k: flags.get(k) for k in (*CONTEXT_FLAGS, *CONTEXT_FLAGS_MORE)}
    start = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()
    merged = with_project_config(options, find_project_config(Path(str(start))), os.environ)
    environ = {key.upper(): value for key, value in os.environ.items()}
    context = {
        name: merged.get(name) or environ.get(f"PRISM_{name.upper()}") or None
        for name in ("tenant", "project", "persona", "surface", "specialization")
    }
    session = merged.get("session_id") or str(claude_session)
    from uuid import UUID

    try:
        asked_in = UUID(str(session))
    except ValueError as exc:
        raise NoServer("--session-id is not a UUID") from exc
    request, own_session = claude_hook.hook_request(data, hook, asked_in, state)
    body = {
        "event": request.event,
        "text": request.text,
        "store": server.store,
        "context": {**context, "session_id": str(own_session)},
        "options": {
            "token_budget": request.token_budget,
            "top_k": request.top_k,
            "min_relevance": request.min_relevance,
            "prompt_rules": request.prompt_rules,
            "subagent_token_budget": request.subagent_token_budget,
            **({"namespace": request.namespace} if request.namespace else {}),
            # only where they count: a server of an earlier version still answers the rest
            **(
                {"touch_rules": request.touch_rules, "touch_relevance": request.touch_relevance}
                if request.event == "PreToolUse"
                else {}
            ),
        },
        "briefed": sorted(request.briefed),
    }
    timeout = min(_server_timeout(), deadline_s)
    status, payload = post_json(server.host, server.port, ROUTE, server.token, body, timeout)
    if status != 200 or not isinstance(payload.get("answer"), dict):
        error = payload.get("error")
        code = error.get("code", "") if isinstance(error, dict) else ""
        raise NoServer(f"the server refused: {status} {code}".rstrip())
    got = payload["answer"]
    result = HookAnswer(
        context=got.get("context") if isinstance(got.get("context"), str) else None,
        served=tuple(str(i) for i in got.get("served") or ()),
        replace=bool(got.get("replace")),
        skipped=str(got.get("skipped") or "added nothing"),
    )
    try:
        out = claude_hook.deliver(request, result, state, own_session)
    except claude_hook.HookSkipped as exc:
        claude_hook.say(str(exc))
        return True
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return True


def _hook_options(flags: dict[str, Any], deadline_s: float) -> claude_hook.HookOptions:
    """The hook's options from the parsed flags, with the CLI's defaults."""
    return claude_hook.HookOptions(
        token_budget=int(flags.get("token_budget", TOKEN_BUDGET_DEFAULT)),
        deadline_s=deadline_s,
        state_dir=None,
        min_relevance=float(flags.get("min_relevance", MIN_RELEVANCE_DEFAULT)),
        namespace=flags.get("namespace"),
        top_k=int(flags.get("top_k", TOP_K_DEFAULT)),
        prompt_rules=int(flags.get("prompt_rules", PROMPT_RULES_DEFAULT)),
        subagent_token_budget=int(
            flags.get("subagent_token_budget", SUBAGENT_TOKEN_BUDGET_DEFAULT)
        ),
        touch_rules=int(flags.get("touch_rules", TOUCH_RULES_DEFAULT)),
        touch_relevance=float(flags.get("touch_relevance", TOUCH_RELEVANCE_DEFAULT)),
    )


def post_json(
    host: str, port: int, path: str, token: str, body: dict[str, Any], timeout: float
) -> tuple[int, dict[str, Any]]:
    """One ``POST`` over a fresh loopback connection (HTTP/1.1, ``Connection: close``), the
    whole exchange within ``timeout`` seconds; the status and the JSON object answered.

    Raises:
        NoServer: nothing listens, the time ran out, or the answer is not HTTP with JSON.
    """
    payload = json.dumps(body, ensure_ascii=False).encode()
    where = f"[{host}]" if ":" in host else host
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {where}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    end = time.monotonic() + timeout
    chunks: list[bytes] = []
    try:
        # A numeric loopback address: connect() directly (create_connection's getaddrinfo
        # would import the IDNA codec for nothing).
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect((host, port))
            sock.sendall(head.encode() + payload)
            size = 0
            while True:
                sock.settimeout(max(0.001, end - time.monotonic()))
                chunk = sock.recv(65_536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > RESPONSE_MAX_BYTES:
                    raise NoServer("the server's answer is too large")
    except TimeoutError:
        raise NoServer(f"no answer within {timeout:g} s ({SERVER_TIMEOUT_ENV})") from None
    except OSError as exc:
        raise NoServer(f"cannot reach the server at {where}:{port}: {exc}") from None
    return _parse_response(b"".join(chunks))


def _parse_response(raw: bytes) -> tuple[int, dict[str, Any]]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise NoServer("the answer is not HTTP")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    try:
        data = json.loads(body)
    except ValueError:
        raise NoServer("the answer is not JSON") from None
    return int(parts[1]), data if isinstance(data, dict) else {}


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    while body:
        size_line, _, body = body.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            raise NoServer("a chunked answer that does not parse") from None
        if size == 0:
            break
        out += body[:size]
        body = body[size + 2 :]
    return bytes(out)


def _server_timeout() -> float:
    """``PRISM_HOOK_SERVER_TIMEOUT`` (0.05 to 10 seconds); a bad value keeps the default."""
    value = os.environ.get(SERVER_TIMEOUT_ENV)
    if value is None:
        return SERVER_TIMEOUT_DEFAULT_S
    try:
        parsed = float(value)
    except ValueError:
        parsed = float("nan")
    if not 0.05 <= parsed <= 10.0:  # also False for NaN
        claude_hook.say(f"{SERVER_TIMEOUT_ENV}={value!r} is not 0.05 to 10 s", "warning")
        return SERVER_TIMEOUT_DEFAULT_S
    return parsed


def _full(argv: list[str], raw: bytes | None) -> None:
    """The full CLI (click, settings, the store in-process), fed the input already read."""
    from prism_memory.cli.main import main

    if raw is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    sys.argv[1:] = [*HOOK_ARGS, *argv]
    main()
