"""Detections -> candidate memorules, with their evidence and where they apply.

``applies_to`` comes from the session, never from the message: the persona the operator was
talking to (a flag or ``PRISM_PERSONA``; conventions name none, they bind the whole project) and
``scope='project'`` (the project is the transcript's working directory unless one is named).
Every candidate is ``observed``: the operator said it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from prism_memory.capture.detector import Detection, detect
from prism_memory.capture.transcript import OperatorMessage
from prism_memory.domain.records import AppliesTo, Confidence, MemoruleKind, MemoruleWrite, Scope


@dataclass(frozen=True)
class Candidate:
    """One memorule a message proposes, and the message it came from."""

    message: OperatorMessage
    detection: Detection
    write: MemoruleWrite


def project_slug(messages: Iterable[OperatorMessage]) -> str | None:
    """The project a transcript worked in: the last part of its first working directory."""
    for m in messages:
        if m.cwd:
            name = PurePath(m.cwd.rstrip("/\\")).name
            if name:
                return name[:100]
    return None


def candidates(
    messages: Iterable[OperatorMessage], persona: str | None, namespace: str = "default"
) -> list[Candidate]:
    """The memorules ``messages`` propose, in transcript order.

    Args:
        messages: what the operator typed (:func:`prism_memory.capture.transcript.read_file`).
        persona: the persona the operator was talking to; None for a rule of the project.
        namespace: where proposals are written.
    """
    personal = AppliesTo(persona=persona, scope=Scope.PROJECT)
    project = AppliesTo(scope=Scope.PROJECT)
    out = []
    for message in messages:
        found = detect(message.text, message.after_action)
        if found is None:
            continue
        write = MemoruleWrite(
            memorule_kind=found.kind,
            subject=found.subject,
            body=found.body,
            # a convention is how the project works, whoever is told
            applies_to=project if found.kind is MemoruleKind.CONVENTION else personal,
            confidence=Confidence.OBSERVED,
            evidence_signal_id=message.evidence_signal_id,
            namespace=namespace,
            idempotency_key=f"capture:{message.evidence_signal_id}",
        )
        out.append(Candidate(message, found, write))
    return out
