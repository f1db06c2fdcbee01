"""The write and read contracts' entry points, as the services call them: raw mappings in,
typed records out, every field error at once in one :class:`~prism_memory.errors.InvalidInput`.

The rules themselves are the operation models of :mod:`prism_memory.domain.contract`; the bounds
(README "Limits") live in :mod:`prism_memory.domain.contract.bounds`, once.
"""

from __future__ import annotations

from prism_memory.domain.contract.bounds import APPLIES_VALUE_MAX as APPLIES_VALUE_MAX
from prism_memory.domain.contract.bounds import BODY_MAX as BODY_MAX
from prism_memory.domain.contract.bounds import EVIDENCE_MAX as EVIDENCE_MAX
from prism_memory.domain.contract.bounds import FILTER_LIST_MAX as FILTER_LIST_MAX
from prism_memory.domain.contract.bounds import IDEMPOTENCY_KEY_MAX as IDEMPOTENCY_KEY_MAX
from prism_memory.domain.contract.bounds import MEMORULE_BODY_MIN as MEMORULE_BODY_MIN
from prism_memory.domain.contract.bounds import NAMESPACE_MAX as NAMESPACE_MAX
from prism_memory.domain.contract.bounds import NAMESPACE_PATTERN as NAMESPACE_PATTERN
from prism_memory.domain.contract.bounds import QUERY_MAX as QUERY_MAX
from prism_memory.domain.contract.bounds import REASON_MAX as REASON_MAX
from prism_memory.domain.contract.bounds import SUBJECT_MAX as SUBJECT_MAX
from prism_memory.domain.contract.bounds import SUBJECT_MIN as SUBJECT_MIN
from prism_memory.domain.contract.bounds import TOP_K_MAX as TOP_K_MAX
from prism_memory.domain.contract.checks import whole_number as whole_number
from prism_memory.domain.contract.recall import RecallCreate
from prism_memory.domain.contract.recall import validate_recall as validate_recall
from prism_memory.domain.contract.remember import APPLIES_TO_FIELDS as APPLIES_TO_FIELDS
from prism_memory.domain.contract.remember import MEMORULE_FIELDS as MEMORULE_FIELDS
from prism_memory.domain.contract.remember import NOTE_FIELDS as NOTE_FIELDS
from prism_memory.domain.contract.remember import validate_remember as validate_remember
from prism_memory.domain.contract.remember import (
    validate_remember_many as validate_remember_many,
)

RECALL_FIELDS = RecallCreate.accepted()
