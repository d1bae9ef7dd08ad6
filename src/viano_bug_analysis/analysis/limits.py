"""InterpretationLimits: operational safeguards of the interpretation phase.

They bound what one interpretation may read, send and publish. They are settings, not
format bounds: an operator may raise them. Gateway limits (GatewayConfig.limits) and
package limits apply on top.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20
KIB = 1 << 10


@dataclass(frozen=True, slots=True)
class InterpretationLimits:
    """Defaults: 8 MiB canonical case, 512 KiB context, 2048 catalogue entries,
    2 MiB accepted output, 2 MiB Markdown.

    Texts enter the context whole; only a context over ``max_context_bytes`` has its
    longest texts shortened (explicitly marked; see ``prompt_builder``).
    """

    max_case_bytes: int = 8 * MIB
    max_context_bytes: int = 512 * KIB
    max_catalogue_entries: int = 2048
    max_output_bytes: int = 2 * MIB
    max_markdown_bytes: int = 2 * MIB

    def __post_init__(self) -> None:
        for name in (
            "max_case_bytes",
            "max_context_bytes",
            "max_catalogue_entries",
            "max_output_bytes",
            "max_markdown_bytes",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"InterpretationLimits.{name} must be a positive integer")
