"""The typed answers the model may give, and the per-request source menu type.

Label definitions are deliberately *not* attached to these fields: they live in the
prompt's instruction text (see ``prompts/report-lineage-v4-*.txt``), so that every
provider sends them, whatever it does with schema descriptions.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, create_model

from modelgate.answers import closed_enum

NO_SOURCE = "NONE"


class Attribution(enum.StrEnum):
    DIRECT = "DIRECT"
    RELAY = "RELAY"
    UNCLEAR = "UNCLEAR"


class Support(enum.StrEnum):
    SUPPORTS = "SUPPORTS"
    DIFFERS = "DIFFERS"
    UNCLEAR = "UNCLEAR"


class AttributionResult(BaseModel):
    """First call: how the report attributes its information, and which menu source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attribution: Attribution
    referenced_source: str

    @property
    def names_source(self) -> bool:
        return self.referenced_source != NO_SOURCE


class SupportResult(BaseModel):
    """Second call: does the referenced report back up what the relay attributes to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    support: Support


@functools.lru_cache(maxsize=256)
def attribution_result_type(menu: tuple[str, ...]) -> type[AttributionResult]:
    """AttributionResult whose ``referenced_source`` is closed to ``menu`` plus ``NONE``.

    The enum is built per menu (and kept for a repeat of the same menu), so a name
    outside the menu fails validation in modelgate (``OutOfSetAnswer``) and never
    reaches the decision rules.
    """
    source_choice = closed_enum("ReferencedSource", [*menu, NO_SOURCE])
    model = create_model(
        "AttributionResult",
        __base__=AttributionResult,
        referenced_source=(source_choice, ...),
    )
    return cast(type[AttributionResult], model)


def plain_labels(result: AttributionResult) -> dict[str, Any]:
    """The labels as plain strings (the per-request enum is not JSON-friendly as is)."""
    source = result.referenced_source
    return {
        "attribution": Attribution(result.attribution).value,
        "referenced_source": getattr(source, "value", source),
    }
