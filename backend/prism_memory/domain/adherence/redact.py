"""Commands as they are stored and shown: secrets out, length bounded (DESIGN §12).

An agent's commands carry secrets (``export GITHUB_TOKEN=ghp_…``, ``curl -H "Authorization:
Bearer …"``, ``git push https://user:pass@host/…``). Verdicts are kept forever in the audit
chain, so what is stored of a command is :func:`redact_command` of it: every value below is
replaced by :data:`MASK`, then the text is cut to :data:`STORED_MAX` characters.

- ``KEY=value`` assignments: of an environment-style name (``API_KEY=…``, ``export X=…``), and
  of any name that says secret (``password=…``, ``db_token=…``);
- options that carry a secret: ``--password x``, ``--token=x``, ``--api-key x``, ``-u user:pw``;
- ``Authorization:`` / ``Proxy-Authorization:`` / ``X-Api-Key:`` headers and ``Bearer``/
  ``Basic``/``token`` credentials;
- credentials in URLs (``scheme://user:pass@host``, ``scheme://token@host``);
- token shapes: GitHub (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``),
  OpenAI/Anthropic (``sk-…``), AWS access keys (``AKIA…``/``ASIA…``), Slack (``xox?-``),
  GitLab (``glpat-``), Google API keys (``AIza…``), npm (``npm_…``), JSON Web Tokens and
  PEM private-key blocks.

Redaction is for storage and display only: the judge matches the command as sent.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from prism_memory.domain.adherence.actions import Action

MASK: Final = "[REDACTED]"
STORED_MAX: Final = 2_000  # characters of a stored command
PATH_STORED_MAX: Final = 1_000

_SECRET_WORDS: Final = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|auth(?!or)|credentials?|session[_-]?key|client[_-]?secret|signature)"
)
_VALUE: Final = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s;&|)'"]+)"""
_OPTION_VALUE: Final = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s;&|)'"-][^\s;&|)'"]*)"""

_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # PEM private keys (multi-line).
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)",
            re.DOTALL,
        ),
        MASK,
    ),
    # Authorization-style headers: everything after the colon up to the quote or line end.
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|private-token|"
            r"cookie)(\s*[:=]\s*)[^\"'\n]+"
        ),
        rf"\1\2{MASK}",
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), rf"\1 {MASK}"),
    # Credentials in URLs: scheme://user:pass@ or scheme://token@.
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@'\"]*:[^/\s@'\"]*@"), rf"\1{MASK}@"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@'\"]{16,}@"), rf"\1{MASK}@"),
    # Options that carry a secret: --password x, --token=x, --api-key x, -u user:pw.
    (
        re.compile(rf"(?i)(--?[a-z0-9-]*{_SECRET_WORDS}[a-z0-9-]*)(=|\s+){_OPTION_VALUE}"),
        rf"\1\2{MASK}",
    ),
    (re.compile(r"(\s-u\s+|\s--user[=\s]+)[^\s:]+:[^\s]+"), rf"\1{MASK}"),
    # KEY=value: environment-style names (upper case) and any name that says secret.
    (
        re.compile(rf"(?<![\w./-])([A-Z_][A-Z0-9_]*)={_VALUE}"),
        rf"\1={MASK}",
    ),
    (
        re.compile(rf"(?i)(?<![\w./-])([a-z0-9_.-]*{_SECRET_WORDS}[a-z0-9_]*)(\s*[:=]\s*){_VALUE}"),
        rf"\1\2{MASK}",
    ),
    # Token shapes, wherever they stand.
    (
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
            r"|sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
            r"|xox[abposr]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}"
            r"|npm_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)"
        ),
        MASK,
    ),
)


_UNSTORABLE: Final = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` with the characters no store keeps (NUL, lone surrogates) as U+FFFD: a
    transcript's JSON can carry them, a verdict record cannot."""
    return _UNSTORABLE.sub("\ufffd", text)


def redact_command(command: str, *, limit: int = STORED_MAX) -> str:
    """``command`` with every secret replaced by :data:`MASK`, cut to ``limit`` characters
    (the cut says how many were dropped)."""
    text = storable(command)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return bounded(text, limit)


def bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    tail = f"…[+{len(text) - limit} chars]"
    return text[: max(0, limit - len(tail))] + tail


def redact_action(action: Action) -> Action:
    """The action as it is stored: a command redacted and bounded, a path bounded."""
    if action.type == "command":
        return dataclasses.replace(action, text=redact_command(action.text))
    return dataclasses.replace(action, text=bounded(storable(action.text), PATH_STORED_MAX))
