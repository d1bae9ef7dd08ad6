"""The one join from a claim to its source: the claim's report, and the organisation
that published it (``Organization.name`` is the claim's source on every page, export
and answer)."""

from __future__ import annotations

from typing import TypeVarTuple

from sqlalchemy import Select

from trace_app.store.models import Claim, Organization, Report

Columns = TypeVarTuple("Columns")


def joined_to_source(query: Select[*Columns]) -> Select[*Columns]:
    """``query`` (over claims, or joined to them) joined to each claim's report and the
    report's organisation."""
    return query.join(Report, Report.id == Claim.report_id).join(
        Organization, Organization.id == Report.organization_id
    )
