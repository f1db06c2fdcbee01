"""Candidate checks from the text of a rule (DESIGN §12): deterministic, no model.

People write the checkable rules in a few shapes; :func:`propose` recognises them and gives
the checks a careful operator would attach, or ``[]``:

- a replacement — "use `pnpm` instead of `npm` or `yarn`", "uses pnpm, NOT npm",
  "`uv run` (not `python`)": the replaced tools become one ``forbid_command`` (a tool name
  never matches inside another: ``npm`` does not fire on ``pnpm``; the replacement itself is
  let through, so ``uv pip`` is not ``pip``);
- a prohibition naming a command, a flag or a file — "never run `npm install` or create
  `package-lock.json`", "do not bypass hooks with `--no-verify`", "do not edit files under
  `src/generated/`": ``forbid_command`` for commands and flags, ``forbid_edit`` for files and
  folders;
- git's own prohibitions — "never force push", "never push directly to `main`";
- an order — "run `make test` before committing": ``require_before``;
- a companion edit — "update CHANGELOG.md with every change under src/", "when adding a file
  to `migrations/`, also register it in `migrate.ts`": ``require_edit_with``.

A wrong check is worse than none (it reminds, asks or blocks at the wrong moment), so a rule
with an exception ("unless asked", "without approval", "when possible", "prefer", "ask
before"), a conditional adverb ("proactively", "automatically") or a subject no command or path
shows ("never commit to `main`": the branch is not in the command) gets no check; nor does a
negated omission ("don't forget to run `x`", "never skip `y`": orders to run them). Every regex
is built from escaped literals, never from the rule's text as a pattern, and passes
:func:`~prism_memory.domain.adherence.checks.parse_checks`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from prism_memory.domain.adherence.checks import CHECKS_MAX, PATTERN_MAX, parse_checks
from prism_memory.errors import InvalidInput

# A check proposal names the rule and the version its checks were read from in its
# ``evidence_signal_id``; the content hash commits to it, so the audit chain can tell a check
# proposal (approving it retires it: its checks go to the rule) from a captured one.
SIGNAL_PREFIX: Final = "checks-for:"
_SIGNAL = re.compile(r"^checks-for:([0-9a-f-]{36})@v(\d+)$")


def proposal_signal(rule_id: UUID, version: int) -> str:
    """The ``evidence_signal_id`` of a check proposal: the rule and version it was read from."""
    return f"{SIGNAL_PREFIX}{rule_id}@v{version}"


def signal_target(signal: str | None) -> tuple[UUID, int] | None:
    """The rule (id, version) a check proposal's ``evidence_signal_id`` names; None for any
    other signal."""
    m = _SIGNAL.match(signal or "")
    return (UUID(m.group(1)), int(m.group(2))) if m else None


TEXT_MAX: Final = 20_000  # characters of rule text read (a rule body is at most this long)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Command-line tools named without backticks ("use pnpm, not npm").
TOOLS: Final = _words(
    "npm npx yarn pnpm pnpx bun bunx deno node vite pip pip3 pipx pipenv poetry conda uv "
    "uvx python python3 cargo rustup go make cmake gradle gradlew mvn docker podman "
    "kubectl helm terraform brew apt apt-get sudo curl wget git gh rm eslint prettier "
    "black ruff flake8 isort mypy pytest jest vitest tsc webpack rollup esbuild"
)
_BRANCHES: Final = ("main", "master", "develop", "trunk", "production", "prod", "release")

# What makes a prohibition conditional, so that no check can say when it applies.
_EXCEPTION = re.compile(
    r"\bunless\b|\bexcept\b|\bwithout\b|\b(?:when|where|if)(?:ever)?\s+possible\b|"
    r"\bprefer(?:red|ably|s)?\b|\bask\b[^.]*?\bbefore\b|\bif\s+(?:needed|necessary|required)\b|"
    r"\b(?:explicitly|specifically)\s+(?:asked|requested|told|instructed)\b",
    re.IGNORECASE,
)
_QUALIFIER = re.compile(r"\b(?:proactively|automatically|unnecessarily)\b", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:never|do\s+not|don't|dont|must\s+not|mustn't|should\s+not|shouldn't|avoid|"
    r"may\s+not|cannot|can't|not\s+allowed\s+to|forbidden\s+to|prohibited)\b|❌|🚫",
    re.IGNORECASE,
)
_EDIT_VERBS: Final = _words(
    "edit edits editing modify modifies modifying change changing touch touching write "
    "writing overwrite overwriting create creating generate generating delete deleting "
    "remove removing rename renaming alter altering hand-edit"
)
_COMMAND_VERBS: Final = _words("use using run running execute executing call invoke type")
_GIT_SPECIAL_VERBS: Final = _words("commit commits committing push pushing merge merging")

# One item of text: a code span, or a bare word (a path, a tool, a verb).
_TOKEN = re.compile(r"`([^`\n]{1,200})`|([^\s`,;:()]+)")
_SEPARATOR = re.compile(r"\s*(?:,\s*|\(\s*)?\b(?:instead\s+of|rather\s+than|not)\b\s*", re.I)
_COMMAND_LIKE = re.compile(r"^(?:--?[a-z][\w-]*|[a-z][a-z0-9._+-]*)(?:\s+\S+){0,6}$")
_FILE_LIKE = re.compile(
    r"^(?:\./|/)?(?:[\w.@-]+/)*(?:\.?[\w@-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,8}|\.[\w-]+)$"
)
_BARE_PATH = re.compile(
    r"^(?:\./)?(?:[\w.@-]+/)+$|^(?:\./)?(?:[\w.@-]+/)*[\w@-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}$"
)
_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\s+[—–]\s+|\s+-\s+|\s*\n\s*")
_MARKUP = re.compile(r"\*\*|__|(?<!\w)\*(?!\*)|^\s*(?:[-*+]|\d+[.)])\s+", re.MULTILINE)

_COMMIT = r"\bgit\s+commit\b"
_PUSH = r"\bgit\s+push\b"
_FORCE_PUSH = r"\bgit\s+push\b[^;&|\n]*\s(?:--force(?:-with-lease)?|-f)(?=\s|=|$)"


@dataclass(frozen=True)
class _Item:
    text: str  # the code span's content, or the bare word
    code: bool  # a code span
    start: int
    end: int


def propose(text: str) -> list[dict[str, Any]]:
    """The checks ``text`` (a rule's subject and body, or one sentence) asks for, as the JSON
    list that ``checks`` takes; ``[]`` when it names nothing a command or an edit shows.

    Deterministic: the same text gives the same list. Never more than
    :data:`~prism_memory.domain.adherence.checks.CHECKS_MAX` checks; each one passes
    :func:`~prism_memory.domain.adherence.checks.parse_checks`.
    """
    found: list[dict[str, Any]] = []
    for sentence in _sentences(text[:TEXT_MAX]):
        for check in _sentence_checks(sentence):
            if check not in found and _valid(check):
                found.append(check)
    return found[:CHECKS_MAX]


def _valid(check: dict[str, Any]) -> bool:
    try:
        parse_checks([check])
    except InvalidInput:
        return False
    return True


def _sentences(text: str) -> list[str]:
    plain = _MARKUP.sub("", text.replace("\r", ""))
    out: list[str] = []
    for line in plain.split("\n"):
        out += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`*_\"'])", line) if s.strip()]
    return out


def _sentence_checks(sentence: str) -> list[dict[str, Any]]:
    if _EXCEPTION.search(sentence):
        return []
    commands: list[str] = []
    edits: list[str] = []
    for clause in (c for c in _CLAUSE_SPLIT.split(sentence) if c.strip()):
        commands += _replacements(clause)
        clause_commands, clause_edits = _prohibitions(clause)
        commands += clause_commands
        edits += clause_edits
    out: list[dict[str, Any]] = []
    unique = list(dict.fromkeys(commands))
    if unique:
        # one check for the commands one sentence forbids together
        joined = unique[0] if len(unique) == 1 else "|".join(f"(?:{c})" for c in unique)
        if len(joined) <= PATTERN_MAX:
            out.append({"forbid_command": joined})
    out += [{"forbid_edit": glob} for glob in dict.fromkeys(edits)]
    return out + _orders(sentence) + _companions(sentence)


# -- replacements: "use A instead of B", "A, not B", "A (not B)" ------------------------------


def _replacements(clause: str) -> list[str]:
    out: list[str] = []
    for sep in _SEPARATOR.finditer(clause):
        before = clause[: sep.start()]
        if re.search(
            r"\b(?:do|does|did|must|should|may|can|will|could|would|is|are)\s*$", before, re.I
        ):
            continue  # "do not ...", "is not ...": a negation, not a replacement
        replacement = _replacement_before(before)
        if replacement is None:
            continue
        parenthesised = "(" in clause[sep.start() : sep.end()]
        for replaced in _replaced_after(clause[sep.end() :], parenthesised):
            out.append(_tool_regex(replaced, replacement))
    return out


def _replacement_before(before: str) -> str | None:
    """The tool used instead (the last code span or tool word before the separator)."""
    tokens = list(_TOKEN.finditer(before))
    if not tokens:
        return None
    last = tokens[-1]
    if before[last.end() :].strip(" ,("):
        return None
    if last.group(1) is not None:
        return last.group(1).strip() if _is_command(last.group(1)) else None
    word = last.group(2).lower()
    if word in TOOLS:
        # "use uv run not python": the tool and its sub-command
        if len(tokens) > 1 and tokens[-2].group(2) and tokens[-2].group(2).lower() in TOOLS:
            return f"{tokens[-2].group(2).lower()} {word}"
        return word
    if len(tokens) > 1 and tokens[-2].group(2) and tokens[-2].group(2).lower() in TOOLS:
        return f"{tokens[-2].group(2).lower()} {word}"
    return None


def _replaced_after(after: str, parenthesised: bool) -> list[str]:
    """The tools replaced: code spans or tool words, joined by commas, "or", "and", "/"."""
    out: list[str] = []
    rest = after
    while True:
        m = _TOKEN.match(rest)
        if m is None:
            break
        if m.group(1) is not None:
            if not _is_runnable(m.group(1), rest[m.end() :], None):
                break  # "`const` instead of `var`": code, not a command
            out.append(m.group(1).strip())
        else:
            word = m.group(2).lower().rstrip(".!?")
            if word not in TOOLS:
                break
            phrase = word
            if parenthesised:  # "(not npm install)": the words up to the parenthesis
                tail = re.match(r"((?:\s+[a-z][\w:-]*){1,3})\s*\)", rest[m.end() :])
                if tail:
                    phrase = f"{word}{tail.group(1)}"
            out.append(phrase)
        rest = rest[m.end() :]
        joiner = re.match(r"\s*(?:,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+|\s*/\s*)", rest)
        if joiner is None or not joiner.group(0).strip():
            break
        rest = rest[joiner.end() :]
    return out


# -- prohibitions: "never run `x`", "do not edit `y`" -----------------------------------------


def _prohibitions(clause: str) -> tuple[list[str], list[str]]:
    negation = _NEGATION.search(clause)
    if negation is None:
        return [], []
    scope = clause[negation.end() :]
    if _NEGATED_NEGATIVE.match(scope):
        return [], []  # "don't forget to run `x`": an order to run it, not a prohibition
    positive = _POSITIVE.search(scope)  # "never use `npm`, use `pnpm`": the scope ends there
    if positive is not None:
        scope = scope[: positive.start()]
    commands: list[str] = []
    edits: list[str] = []
    git = _git_prohibition(scope)
    if git is not None:
        return [git], []
    verbs: list[str] = []
    for m in _TOKEN.finditer(scope):
        if m.group(2) is not None:
            word = m.group(2).lower().strip(".!?'\"")
            if word in _EDIT_VERBS or word in _COMMAND_VERBS or word in _GIT_SPECIAL_VERBS:
                verbs.append(word)
            continue
        if _QUALIFIER.search(scope[: m.start()]):
            return [], []
        item = m.group(1).strip()
        after = scope[m.end() :]
        if _BRANCH_TARGET.search(scope[: m.start()]):
            continue  # "never commit to `main`": the branch is not in the command
        folder = re.match(r"\s+(?:directory|folder|dir)\b", after, re.I) is not None
        edit_verb = any(v in _EDIT_VERBS for v in verbs)
        glob = _glob(item, folder)
        if (
            glob is not None
            and (edit_verb or folder)
            and not (verbs and verbs[-1] in _COMMAND_VERBS and not edit_verb)
        ):
            edits.append(glob)
            continue
        if glob is None and edit_verb and _FILE_NAME.match(item):
            edits.append(item)  # "never edit `Makefile`"
            continue
        if _is_runnable(item, after, verbs[-1] if verbs else None) and not edit_verb:
            sub = re.match(r"\s+([a-z][\w-]*)\s+commands?\b", after)  # "the `git` commit command"
            commands.append(_tool_regex(f"{item} {sub.group(1)}" if sub else item, None))
    for m in re.finditer(
        r"(?<![\w`/.~-])((?:\./)?[\w.@-]+/(?:[\w.@-]+/)*|[\w.@-]+\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w`/])",
        scope,
    ):
        words = re.findall(r"[a-z-]+", scope[: m.start()].lower())
        if not any(w in _EDIT_VERBS for w in words) or _QUALIFIER.search(scope[: m.start()]):
            continue
        if any(w in _GIT_SPECIAL_VERBS for w in words[-3:]):
            continue
        if _BARE_PATH.match(m.group(1)) and "`" not in scope[max(0, m.start() - 1) : m.start()]:
            glob = _glob(m.group(1), False)
            if glob is not None and glob not in edits:
                edits.append(glob)
    return commands, edits


_NEGATED_NEGATIVE = re.compile(
    r"\s*(?:ever\s+)?(?:forget|skip|omit|neglect|fail|hesitate|miss|leave\s+out)\b", re.I
)
_POSITIVE = re.compile(
    r"[,(]\s*(?:and\s+|but\s+)?(?:use|always|instead|rather|prefer|run|only)\b|\bbut\b|\binstead\b",
    re.I,
)
_BRANCH_TARGET = re.compile(
    r"\b(?:commit|commits|committing|push|pushing|merge|merging)\b(?:\s+\w+){0,2}?"
    r"\s+(?:to|into|on|onto)\s*$",
    re.I,
)
_FILE_NAME = re.compile(r"^[A-Z][A-Za-z]+file$")  # Makefile, Dockerfile, Jenkinsfile


def _git_prohibition(scope: str) -> str | None:
    """Git's shapes: a force push, a push to a named branch."""
    if re.match(r"\s*(?:ever\s+)?(?:run\s+|use\s+|do\s+)?(?:a\s+)?force[- ]?push", scope, re.I):
        return _FORCE_PUSH
    push = re.match(
        r"\s*(?:ever\s+)?push(?:es|ing)?\s+(?:directly\s+)?(?:to\s+)?(?:the\s+)?`?("
        + "|".join(_BRANCHES)
        + r")`?(?:\s*/\s*`?("
        + "|".join(_BRANCHES)
        + r")`?)?(?:\s+branch)?(?:\s+directly)?\b",
        scope,
        re.I,
    )
    if push is None:
        return None
    branches = [b.lower() for b in push.groups() if b]
    name = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return rf"\bgit\s+push\b[^;&|\n]*[\s:]{name}(?=\s|$|[;&|])"


# -- orders: "run `make test` before committing" ----------------------------------------------

_BEFORE_EVENT = (
    r"before\s+(?:(?:every|each|any|a|you|creating\s+(?:a|any))\s+)?(?P<event>commit(?:ting|s)?|"
    r"push(?:ing|es)?|git\s+commit|git\s+push)\b"
)
_ORDER = re.compile(
    r"\brun(?:ning)?\s+(?P<cmd>`[^`\n]{1,200}`)\s+(?:\w+\s+){0,3}?" + _BEFORE_EVENT, re.I
)
_ORDER_FIRST = re.compile(
    _BEFORE_EVENT + r"[^.`]{0,40}?,\s*(?:always\s+)?run\s+(?P<cmd>`[^`\n]{1,200}`)", re.I
)


def _orders(sentence: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pattern in (_ORDER, _ORDER_FIRST):
        for m in pattern.finditer(sentence):
            command = m.group("cmd").strip("`").strip()
            if not _is_command(command):
                continue
            before = _PUSH if "push" in m.group("event").lower() else _COMMIT
            out.append(
                {"require_before": {"command": _tool_regex(command, None), "before": before}}
            )
    return out


# -- companions: "update CHANGELOG.md with every change under src/" ---------------------------

# a code span, or a bare word with a '/' or a file extension (never "it" or "the docs")
_PATH = (
    r"(?:`[^`\n]{1,200}`|(?:\./|/)?(?:[\w.@-]+/)+(?:[\w.@-]+)?"
    r"|[\w@-]+(?:\.[\w-]+)*\.[A-Za-z]\w{0,7})"
)
_COMPANION_EVERY = re.compile(
    r"\b(?:update|add\s+(?:an?\s+)?(?:entry|line|note)\s+(?:to|in))\s+(?P<also>" + _PATH + r")\s+"
    r"(?:with|for|on)\s+(?:every|each|any)\s+(?:change|edit|modification)\s+"
    r"(?:under|in|to|inside|within)\s+(?P<edit>" + _PATH + r")",
    re.I,
)
_COMPANION_WHEN = re.compile(
    r"\b(?:when(?:ever)?|if|after)\s+(?:you\s+)?(?:add|adding|change|changing|modify|modifying|"
    r"edit|editing|touch|touching|update|updating|create|creating)\b[^.;]*?"
    r"\b(?:to|in|under|inside)\s+(?P<edit>" + _PATH + r")[^.;]*?\balso\s+"
    r"(?:update|register|edit|change|add)\b[^.;`]*?(?P<also>" + _PATH + r")",
    re.I,
)


def _companions(sentence: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pattern in (_COMPANION_EVERY, _COMPANION_WHEN):
        for m in pattern.finditer(sentence):
            edit = _glob(m.group("edit").strip("`"), folder=False, loose=True)
            also = _glob(m.group("also").strip("`"), folder=False, loose=True)
            if edit is not None and also is not None and edit != also:
                out.append({"require_edit_with": {"edit": edit, "also": also}})
    return out


# -- building patterns --------------------------------------------------------------------------


_RUN_VERBS: Final = _words("run running execute executing call invoke")


def _is_runnable(item: str, after: str, verb: str | None) -> bool:
    """Whether a code span named in a prohibition is a command (``npm install``,
    ``--no-verify``, "`cd` commands") rather than code ("never use `any`", "`var`")."""
    if not _is_command(item):
        return False
    words = item.split()
    if words[0].startswith("-") or words[0].lower() in TOOLS or verb in _RUN_VERBS:
        return True
    if re.match(r"\s+(?:[a-z][\w-]*\s+)?commands?\b", after, re.I):
        return True
    return len(words) > 1 and all(re.fullmatch(r"[a-z][\w:.-]*|--?[\w-]+", w) for w in words)


def _is_command(text: str) -> bool:
    text = text.strip()
    return bool(_COMMAND_LIKE.match(text)) and not _FILE_LIKE.match(text) and "<" not in text


def _glob(text: str, folder: bool, loose: bool = False) -> str | None:
    """A path named in a rule as a glob of :mod:`.paths`: folders end in ``/**``; a leading
    ``/`` or ``./`` means the project's folder. ``None`` for what is not a project path."""
    path = text.strip().rstrip(".,")
    if not path or path.startswith(("~", "$", "..")) or "\\" in path or " " in path:
        return None
    if "*" in path or "?" in path or "{" in path or "<" in path:
        return None
    path = path.lstrip("/") if path.startswith("/") else path
    while path.startswith("./"):
        path = path[2:]
    if not path or path == "/":
        return None
    if path.endswith("/") or folder:
        return path.rstrip("/") + "/**"
    if _FILE_LIKE.match(path) or (loose and "/" in path):
        return path
    return None


def _tool_regex(command: str, replacement: str | None) -> str:
    """A regex for a command named in a rule: its words escaped, any blanks between them,
    never inside a longer name (``npm`` is not ``pnpm``, ``npm-run-all`` or ``.npmrc``).

    ``git commit --amend`` allows the flag anywhere after the sub-command. With a
    ``replacement`` (``uv pip`` for ``pip``, ``uv run`` for ``python``), the command is
    let through when the replacement comes right before it.
    """
    words = command.split()
    flags = [w for w in words[2:] if w.startswith("-")]
    if (
        len(words) >= 3
        and len(flags) == 1
        and flags[0] == words[-1]
        and not words[0].startswith("-")
    ):
        head = r"\s+".join(re.escape(w) for w in words[:-1])
        core = rf"\b{head}\b[^;&|\n]*\s{re.escape(flags[0])}(?![\w-])"
        return core
    body = r"\s+".join(re.escape(w) for w in words)
    start = r"(?<![\w-])" if words[0].startswith("-") else r"(?<![\w./@-])"
    end = r"(?![\w.@/-])" if re.search(r"\w$", words[-1]) else ""
    guard = ""
    if replacement is not None:
        rwords = replacement.split()
        if len(rwords) > 1 and rwords[-1] == words[0]:
            guard = f"(?<!{_literal(rwords[:-1])} )"
        elif 1 <= len(rwords) <= 2 and all(re.fullmatch(r"[\w.-]+", w) for w in rwords):
            guard = f"(?<!{_literal(rwords)} )"
    return f"{guard}{start}{body}{end}"


def _literal(words: list[str]) -> str:
    """Words as a fixed-width regex literal (one blank between them)."""
    return " ".join(re.escape(w) for w in words)
