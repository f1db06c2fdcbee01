"""Every bound of the contract, once (README "Limits"): the models, the OpenAPI schema, the
MCP tool schemas, the CLI's options and the services all read them from here."""

from __future__ import annotations

import re
from typing import Final

# Texts (counted without their surrounding whitespace).
SUBJECT_MIN: Final = 4
SUBJECT_MAX: Final = 300
MEMORULE_BODY_MIN: Final = 10
BODY_MAX: Final = 16_000
APPLIES_VALUE_MAX: Final = 100
# An evidence id names its source; an imported rule's also keeps its file's front matter
# (rules_io.records.Front: a description and exact globs), which 200 characters did not hold.
EVIDENCE_MAX: Final = 1_000
NAMESPACE_MAX: Final = 100
IDEMPOTENCY_KEY_MAX: Final = 200
REASON_MAX: Final = 2_000
QUERY_MAX: Final = 4_000

# Recall and the brief.
TOP_K_MAX: Final = 100
TOP_K_RECALL_DEFAULT: Final = 10
FILTER_LIST_MAX: Final = 5
TOKEN_BUDGET_MIN: Final = 100
TOKEN_BUDGET_MAX: Final = 20_000
TOKEN_BUDGET_DEFAULT: Final = 1_200
TASK_MAX: Final = 4_000  # as sent, whitespace included
TOP_K_DEFAULT: Final = 30  # the brief's

# Listing memories.
LIMIT_DEFAULT: Final = 50
LIMIT_MAX: Final = 200

# Audit events and served receipts.
AUDIT_LIMIT_MAX: Final = 500
AUDIT_LIMIT_DEFAULT: Final = 50
SERVED_LIMIT_DEFAULT: Final = 100
# The largest audit page cursor (an event's seq) any door accepts: beyond the 64-bit
# integers both engines store, a bigger one would crash the query instead of matching nothing.
AUDIT_CURSOR_MAX: Final = 2**62

NAMESPACE_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")
AUDIT_EVENT_FILTER_MAX: Final = 4  # event types named in one audit filter

# The capture review queue.
PROPOSALS_LIMIT_MAX: Final = 500
PROPOSALS_LIMIT_DEFAULT: Final = 50
