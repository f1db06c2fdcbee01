"""``semantic_recall``: the memories that apply to a session context, best first."""

from __future__ import annotations

from uuid import UUID

from prism_memory.domain.neighbours import ORDER_TOP, smooth_neighbours
from prism_memory.domain.ranking import Ranked, normalise_key
from prism_memory.domain.records import (
    APPLIES_TO_KEYS,
    Kind,
    RecallMatch,
    RecallQuery,
    RecallResult,
    SessionContext,
    SourceType,
)
from prism_memory.domain.restated import without_restated
from prism_memory.domain.sections import section_of, smooth
from prism_memory.services.memory_deps import MemoryDeps
from prism_memory.trigraph.port import CandidateFilter, RecallRequest


class RecallService:
    """Recall over all memory: the engine ranks, this validates, fetches and records."""

    def __init__(self, deps: MemoryDeps) -> None:
        self.deps = deps

    def recall(
        self,
        ctx: SessionContext,
        q: RecallQuery,
        served_as: str | None = "semantic_recall",
    ) -> RecallResult:
        """``semantic_recall``: the memories that apply to the context, best first.

        Args:
            ctx: the session context; its persona/surface/specialization drive applicability.
            q: the request (DESIGN §6), validated at the door
                (:meth:`~prism_memory.domain.contract.recall.RecallCreate.to_query`).
            served_as: the tool its served receipts name (None: record none, e.g. a brief
                records what it finally shows itself).
        """
        deps = self.deps
        conflicts: dict[str, str] = {}
        if not q.include_inapplicable:
            for key in APPLIES_TO_KEYS:
                value = normalise_key(ctx.value(key))
                if value is not None:
                    conflicts[key] = value
        flt = CandidateFilter(
            project_id=ctx.project_id,
            persona=ctx.persona,
            memorules_only=q.source_type is SourceType.MEMORULE,
            namespace=q.namespace,
            memorule_kinds=q.memorule_kinds,
            confidences=q.confidences,
            exclude_conflicts=conflicts,
        )
        # Relevance is scored without the words that only restate the context (DESIGN §6).
        text = without_restated(q.query, ctx, deps.weights.restated)
        qvec = deps.embedder.embed([text])[0] if text.strip() else None
        # Section and neighbour smoothing re-rank the best ``section_window`` (DESIGN §6;
        # domain.sections, domain.neighbours).
        w = deps.weights
        smoothed = (w.section > 0.0 or w.neighbours > 0.0) and qvec is not None
        window = max(q.top_k, w.section_window) if smoothed else q.top_k
        page = deps.store.recall(
            ctx.tenant_id,
            RecallRequest(
                filter=flt,
                context=ctx,
                query=text,
                vector=qvec,
                model=deps.embedder.model_id,
                weights=deps.weights,
                top_k=window,
                include_inapplicable=q.include_inapplicable,
                preselect_above=deps.preselect_above,
            ),
        )
        ranked = page.ranked
        if smoothed and len(ranked) > 1:
            ranked = self._smoothed(ctx, ranked, page.subjects, q.top_k)
        ranked = ranked[: q.top_k]
        found = deps.store.get_many(ctx.tenant_id, [UUID(r.memory_id) for r in ranked])
        matches = []
        for r in ranked:
            pair = found.get(UUID(r.memory_id))
            if pair is not None:
                matches.append(RecallMatch(pair[0], pair[1], r.score, r.why, r.applicable))
        if served_as is not None and deps.served is not None:
            deps.served.record(ctx, served_as, q.query, matches)
        return RecallResult(matches, deps.embedder.model_id, page.candidates)

    def _smoothed(
        self,
        ctx: SessionContext,
        ranked: list[Ranked],
        heads: dict[str, tuple[Kind, str | None]] | None,
        keep: int,
    ) -> list[Ranked]:
        """The window re-ranked by section, then its notes by their neighbours (at least
        its best ``keep``)."""
        deps, w = self.deps, self.deps.weights
        if heads is None:
            heads = deps.store.subjects(ctx.tenant_id, [r.memory_id for r in ranked])
        kept = [(r, heads[r.memory_id]) for r in ranked if r.memory_id in heads]
        window = [r for r, _ in kept]
        if w.section > 0.0:
            sections = [section_of(subject) for _, (_, subject) in kept]
            rules = [kind is Kind.MEMORULE for _, (kind, _) in kept]
            window = smooth(window, sections, rules, w)
        notes = [r.memory_id for r, (kind, _) in kept if kind is Kind.NOTE]
        # A window of no more notes than the order test reads is left as ranked under a
        # gate, so the engine is not asked where they stand.
        gated_out = w.neighbours_gate > 0.0 and len(notes) <= ORDER_TOP
        if w.neighbours > 0.0 and notes and not gated_out:
            places = deps.store.note_places(
                ctx.tenant_id, ctx.project_id, notes, w.neighbours_window
            )
            window = smooth_neighbours(window, places, w, keep)
        return window
