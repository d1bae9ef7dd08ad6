"""InterpretationError: storage and input problems of the interpretation phase.

Codes (``interpretation.*``) say what went wrong; callers classify by code, never by
message text. Model answers that fail validation are *not* errors of this kind: they
are rejected with a report and the API returns ``ERROR`` (see docs/case-interpretation.md).

    interpretation.identity_invalid      case_id / package_id is not a valid identity
    interpretation.attempt_id_invalid    attempt_id is not 1-64 of [A-Za-z0-9._:-]
    interpretation.package_not_found     the store has no such (case, package)
    interpretation.case_not_built        no confirmed case-built checkpoint for the revision
    interpretation.checkpoint_invalid    a checkpoint is missing, unreadable or inconsistent
    interpretation.pointer_invalid       a manifest pointer is missing or names another file
    interpretation.identity_mismatch     case_id / package_id / revision disagree
    interpretation.raw_input_changed     original/ no longer matches the revision's fingerprint
    interpretation.case_hash_mismatch    the canonical case bytes differ from the checkpoint
    interpretation.case_invalid          the canonical case is not the JSON CaseBuilder writes
    interpretation.context_invalid       a preserved context.json does not match its binding
    interpretation.context_stale         a preserved, not yet completed context was prepared
                                         under another prompt version, or the current
                                         PromptBuilder/limits build another one
    interpretation.limit.<name>          an InterpretationLimits bound was passed
    interpretation.limit.max_original_*  a CaseBuilderLimits bound (``case_limits``) was
                                         passed while fingerprinting original/
    interpretation.attempt_mismatch      an attempt_id is reused with other fingerprints
    interpretation.resumption_required   a BLOCKED attempt needs resume + a new attempt_id
    interpretation.resumption_needs_new_attempt_id  resume=True named an attempt with rounds
    interpretation.nothing_to_resume     resume=True but no attempt is BLOCKED
    interpretation.published_invalid     a published interpretation no longer validates
    interpretation.storage               the package store failed while reading or writing
"""

from __future__ import annotations

from viano_bug_analysis.errors import VianoError


class InterpretationError(VianoError):
    """A storage or input problem stopped the interpretation; nothing was published."""

    code = "interpretation.error"
