"""CaseBuilderLimits: configurable operational safeguards for building a case.

Passing one raises :class:`~viano_bug_analysis.errors.LimitExceeded` with code
``limit.<field name>``. The unread-block thresholds are not errors: they decide when a
long log, stack trace or code block is kept as an unread reference (X record) instead
of inline text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from viano_bug_analysis.errors import LimitExceeded

MiB = 1 << 20


@dataclass(frozen=True)
class CaseBuilderLimits:
    max_raw_input_bytes: int = 64 * MiB  # one parsed input member (it is read whole)
    max_original_members: int = 10_000  # files under original/
    max_original_bytes: int = 4096 * MiB  # all of original/ (streamed for hashing only)
    max_records: int = 200_000
    max_record_text_bytes: int = 1 * MiB  # one record's text after unread blocks left out
    max_case_bytes: int = 256 * MiB  # the canonical JSON
    max_entities: int = 5_000  # N records
    max_entity_mentions: int = 50  # record ids listed per entity
    unread_block_bytes: int = 1024  # fenced block / trace run at least this long -> X
    unread_block_lines: int = 25  # ... or at least this many lines -> X
    unread_fact_bytes: int = 4096  # an inline fact value longer than this -> value_ref

    def check(self, name: str, value: int) -> None:
        """Raise LimitExceeded if ``value`` passes the limit field ``name``."""
        limit = getattr(self, name)
        if value > limit:
            raise LimitExceeded(
                f"{name.replace('_', ' ')}: {value} exceeds the limit of {limit}",
                name=name,
                limit=limit,
                value=value,
            )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CaseBuilderLimits:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: int(v) for k, v in obj.items() if k in known})
