"""How long an operator message means to hold: the time scope the detector gates on.

Whether a message should outlive the session is a matter of time, not of topic: "let's use
``strings.Contains()`` here" and "we should be using the strong types wherever we can" are
about the same things in the same words. What tells them apart is read here, from the
operator's own words (``detector.clean`` has already set quoted and pasted text aside):

- **client text** — IDE context tags (``<ide_opened_file>…``) are the client's, not the
  operator's; pasted review-bot findings and diffs (``High Severity``, ``+  code``) are the
  task the operator hands over.
- **a task description** — several sentences, a list or a long paragraph: real operators
  specify work in rule words ("always", "never", "do not"), so a candidate from one needs a
  standing marker in a sentence addressed to the agent or the team ("the function always
  returns" describes the program, not the agent).
- **a standing request** — the rule outlives the change on its own terms: a strong standing
  marker (*from now on, going forward, next time, whenever, remember to…*) in a sentence
  addressed to the agent or team, or a request to write the lesson into the agent's
  instruction file (*add this to CLAUDE.md*), which is lasting by intent even as a question.

``bench/capture_others/timescope.py`` measures each of these on the dev parts of the set
written by other people.
"""

from __future__ import annotations

import re

_CLIENT_TAG = re.compile(r"<(ide_[a-z_]+|task-notification)>.*?</\1>", re.S)
_PASTED = re.compile(r"\b(high|medium|low) severity\b|^\s*[+-]\s{2,}\S|^=== ", re.I | re.M)
_LIST = re.compile(r"^\s*(\d+[.)]|[-*+]|[a-z]\))\s", re.M)
TASK_CHARS = 280  # a reaction is short; past this, a paragraph of work
TASK_SENTENCES = 3
STANDING = re.compile(
    r"\b(always|never(?! mind)|from now on|going forward|in (the )?future|next time|"
    r"every time|each time|whenever|wherever|by default|any ?more|don't ever|do not ever|"
    r"at all times|as a rule|in general|generally|on purpose|explicitly|"
    r"in (this|our|the) (repo|repository|project|codebase)|"
    r"remember|keep in mind|have in mind|claude\.md|agents\.md)\b"
)
STRONG = re.compile(
    r"\b(from now on|going forward|in (the )?future|next time|every time|whenever|wherever|"
    r"remember (to|when|that)|keep in mind|have in mind)\b"
)
_ADDRESSED = re.compile(
    r"\b(you|your|we|our|us|claude|agents?|let's|i want|i'd like|"
    r"in (this|our|the) (repo|repository|project|codebase))\b|^(please )?(remember|keep in mind)\b"
)
_PERSIST = re.compile(
    r"\b(add|update|put|include|write|document|note|record)\b[^.?!\n]{0,60}"
    r"\b(claude|agents)\.md\b|\b(claude|agents)\.md\b[^.?!\n]{0,80}\bagain\b"
)


def without_client_tags(text: str) -> str:
    """The message without the IDE context tags the client wraps around it."""
    return _CLIENT_TAG.sub(" ", text)


def pasted(text: str) -> bool:
    """The message carries a review-bot finding or a diff pasted in."""
    return bool(_PASTED.search(text))


def task_description(words: str, sentences: int) -> bool:
    """Several sentences, a list or a long paragraph: work being specified, not a reaction."""
    return (
        len(words.strip()) > TASK_CHARS or sentences > TASK_SENTENCES or bool(_LIST.search(words))
    )


def addressed(low: str, imperative: bool) -> bool:
    """The sentence speaks to the agent or the team (or about this repository)."""
    return imperative or bool(_ADDRESSED.search(low))


def standing(low: str) -> bool:
    """A marker that the sentence holds beyond this change (always, never, by default…)."""
    return bool(STANDING.search(low))


def strongly_standing(low: str) -> bool:
    """A marker that puts an instruction beyond this change by itself (from now on…)."""
    return bool(STRONG.search(low))


def asks_to_persist(low: str) -> bool:
    """A request to write something into the agent's instruction file (CLAUDE.md…)."""
    return bool(_PERSIST.search(low))
