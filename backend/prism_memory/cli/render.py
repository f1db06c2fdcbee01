"""How the CLI shows results to people (``--json`` prints the payloads instead)."""

from __future__ import annotations

import textwrap
from typing import Any


def write_result(data: dict[str, Any]) -> str:
    lines = [
        f"{'replayed' if data.get('replayed') else 'wrote'} {data['kind']} {data['id']} "
        f"(version {data['version']}, {data['written_at']})"
    ]
    if data.get("audit_id"):
        lines.append(f"audit event {data['audit_id']}")
    for w in data.get("warnings", []):
        lines.append(
            f"warning: {w['code']}: memorule {w.get('memorule_id')} "
            f"(similarity {w.get('similarity')})"
        )
    return "\n".join(lines)


def pin_result(data: dict[str, Any]) -> str:
    now = "pinned" if data["pinned"] else "unpinned"
    if not data["changed"]:
        return f"memorule {data['id']} was already {now}; nothing written"
    return f"{now} memorule {data['id']}\naudit event {data['audit_id']}"


def recall_result(data: dict[str, Any]) -> str:
    if not data["matches"]:
        return f"no memories match (searched {data['candidates']})"
    lines = []
    for i, m in enumerate(data["matches"], 1):
        tag = m["kind"]
        if m["kind"] == "memorule":
            tag = f"{m['memorule_kind']}, {m['confidence']}"
        mark = "" if m.get("applicable", True) else "  [does not apply to this context]"
        title = m["subject"] or textwrap.shorten(m["body"], 70)
        lines.append(f"{i:>2}. {title}  ({tag}; score {m['score']:.3f}){mark}")
        lines.append(f"    id {m['id']}  v{m['version']}  {m['written_at']}")
        if m["kind"] == "memorule":
            applies = ", ".join(f"{k}={v}" for k, v in m["applies_to"].items())
            lines.append(f"    applies to: {applies}")
        lines.append(textwrap.indent(textwrap.fill(m["body"], 96), "    "))
    return "\n".join(lines)


def memory(data: dict[str, Any]) -> str:
    m, s = data["memory"], data["state"]
    lines = [f"{m['kind']} {m['id']}  ({m['status']}, version {s['version']})"]
    if s.get("subject"):
        lines.append(f"subject: {s['subject']}")
    if m["kind"] == "memorule":
        lines.append(f"kind: {s['memorule_kind']}   confidence: {s['confidence']}")
        lines.append("applies to: " + ", ".join(f"{k}={v}" for k, v in s["applies_to"].items()))
        if s.get("evidence_signal_id"):
            lines.append(f"evidence: {s['evidence_signal_id']}")
        lines.extend(checks_lines(s, ""))
    lines.append(
        f"written by {s['written_by_persona'] or '-'} (session "
        f"{s['written_by_session_id']}) at {s['written_at']}"
    )
    lines.append("")
    lines.append(s["body"])
    return "\n".join(lines)


def checks_lines(state: dict[str, Any], indent: str) -> list[str]:
    """A rule's enforcement and checks, one check a line (nothing for a rule without)."""
    if "enforcement" not in state:
        return []
    lines = [f"{indent}enforcement: {state['enforcement']}"]
    for check in state.get("checks") or []:
        ((kind, value),) = check.items()
        shown = (
            "  ".join(f"{k}: {v}" for k, v in value.items()) if isinstance(value, dict) else value
        )
        lines.append(f"{indent}check {kind}: {shown}")
    return lines


def audit_events(data: dict[str, Any]) -> str:
    if not data["events"]:
        return "no audit events"
    lines = []
    for e in data["events"]:
        lines.append(
            f"#{e['seq']:<6} {e['written_at']}  {e['event']:<10} memorule {e['memorule_id']}  "
            f"by {e['written_by_persona'] or '-'} (session {e['written_by_session_id']})"
            + (f"  evidence {e['evidence_signal_id']}" if e.get("evidence_signal_id") else "")
            + (f"  — {e['reason']}" if e.get("reason") else "")
        )
    if data.get("next_cursor"):
        lines.append(f"more: --before {data['next_cursor']}")
    return "\n".join(lines)


def history(data: dict[str, Any]) -> str:
    m = data["memory"]
    lines = [f"{m['kind']} {m['id']} ({m['status']}), {len(data['versions'])} versions"]
    for v in data["versions"]:
        lines.append(
            f"\nversion {v['version']}  {v['written_at']}  by "
            f"{v['written_by_persona'] or '-'} (session {v['written_by_session_id']})"
        )
        if v.get("reason"):
            lines.append(f"  reason: {v['reason']}")
        if v.get("subject"):
            lines.append(f"  subject: {v['subject']}")
        if v.get("memorule_kind"):
            lines.append(
                f"  {v['memorule_kind']}, {v['confidence']}, applies to "
                + ", ".join(f"{k}={x}" for k, x in v["applies_to"].items())
            )
            lines.extend(checks_lines(v, "  "))
        lines.append(textwrap.indent(textwrap.fill(v["body"], 96), "  "))
    if data["audit"]:
        lines.append("\naudit:")
        lines.append(audit_events({"events": data["audit"]}))
    return "\n".join(lines)


def chain_report(data: dict[str, Any]) -> str:
    served = data.get("served")
    served_broken = served is not None and not served["ok"]
    problem = data.get("problem") or ""
    audit_ok = data["ok"] or (served_broken and problem.startswith("served receipts: "))
    if audit_ok:
        line = f"audit chain OK: {data['events']} events, head {data['head'][:16]}…"
        line += f"; {data.get('content_checked', 0)} content hashes match their states"
        if data.get("legacy_events"):
            line += (
                f"; {data['legacy_events']} legacy events (written before content hashes) "
                "verified as before"
            )
        if data.get("given_head"):
            given = data["given_head"]
            line += f"; extends the given head {given['seq']}:{given['hash'][:16]}…"
    else:
        where = f"event #{data['broken_at_seq']}"
        if data.get("broken_event_id"):
            where += f" ({data['broken_event_id']})"
        line = f"audit chain BROKEN at {where}: {problem}"
    lines = [line]
    if served is not None and not served_broken:
        lines.append(f"served receipts OK: {served['events']} receipts")
    elif served is not None:
        lines.append(
            f"served receipts BROKEN at receipt #{served['broken_at_seq']}: {served['problem']}"
        )
    return "\n".join(lines)


_APPLIES_FLAGS = "--for-persona, --for-surface, --for-specialization or --scope"
# The API's field names as the command line spells them (the JSON keeps the API's names).
FLAG_OF_FIELD: dict[str, str] = {
    "applies_to": _APPLIES_FLAGS,
    "applies_to.persona": "--for-persona",
    "applies_to.surface": "--for-surface",
    "applies_to.specialization": "--for-specialization",
    "applies_to.scope": "--scope",
    "memorule_kind": "--memorule-kind",
    "evidence_signal_id": "--evidence",
    "idempotency_key": "--idempotency-key",
    "top_k": "--top-k",
    "source_type": "--source-type",
    "session_id": "--session-id",
    "include_inapplicable": "--include-inapplicable",
    "query": "QUERY",
    "memory_id": "ID",
    **{
        name: f"--{name}"
        for name in (
            *("kind", "subject", "body", "confidence", "namespace", "corrects", "strict"),
            *("reason", "tenant", "project", "persona", "surface", "specialization", "db"),
        )
    },
}


def error(payload: dict[str, Any], flags: dict[str, str] | None = None) -> str:
    """An error for people: one line, then one per field; with ``flags``, each field named
    as the command's option (``--for-persona``), not as the API's field (``applies_to``)."""
    err = payload["error"]
    lines = [f"error: {err['code']}: {err['message']}"]
    for f in err.get("fields", []):
        field = f["field"] or "(request)"
        message = f["message"]
        if flags is not None and f["field"] in flags:
            flag = flags[f["field"]]
            if f["field"] == "applies_to" and f["code"] == "missing" and flag == _APPLIES_FLAGS:
                message = f"a memorule needs at least one of {flag}"
            else:
                message = message.replace(f"'{f['field']}'", flag)
            field = flag
        lines.append(f"  {field}: {f['code']}: {message}")
    return "\n".join(lines)
