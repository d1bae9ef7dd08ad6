"""A saved run stores its decision when it is saved, and a CACHED result reads it back
without deciding again (docs/decisions/0084)."""

from __future__ import annotations

from typing import Any

import pytest

from trace_app.investigation import evidence_store, rules, service
from trace_app.investigation.vocabulary import Mode, Status

from .conftest import PASSPHRASE, Harness, publish, saved_runs

CAMP = "Tatopani Relief Camp Demo"
DIRECT_TEXT = "I met Maya Gurung, 24, at the camp gate and wrote down her name myself."
HEARSAY_TEXT = "People say Maya Gurung was taken to the camp gate; nobody has confirmed it."
DIRECT = {"attribution": "DIRECT", "referenced_source": "NONE"}


def never(text: str) -> Any:
    raise AssertionError("a saved run was decided again")


@pytest.mark.parametrize(
    ("text", "status", "lowered"),
    [(DIRECT_TEXT, Status.COMPLETED, False), (HEARSAY_TEXT, Status.NEEDS_REVIEW, True)],
    ids=["first-hand", "hearsay"],
)
async def test_a_live_run_stores_its_decision_and_cached_reads_it(
    harness: Harness,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    status: Status,
    lowered: bool,
) -> None:
    report_id = publish(harness.db, CAMP, text)
    harness.provider.add(DIRECT)
    live = await harness.service.investigate(report_id, PASSPHRASE)
    assert (live.status, live.mode, bool(live.lowered_by)) == (status, Mode.LIVE, lowered)

    [run] = saved_runs(harness.db)
    assert (run.decided_status, run.decided_reason) == (live.status.value, live.reason)
    assert run.decided_lowered_by == list(live.lowered_by)
    assert run.decided_version == rules.decision_version() and run.decided_evidence is None
    assert run.awaiting_review is (status is Status.NEEDS_REVIEW)

    # showing it again finds no cues and decides nothing: it reads what was stored
    monkeypatch.setattr(evidence_store, "find_cues", never)
    monkeypatch.setattr(service, "find_cues", never)
    cached = await harness.service.investigate(report_id, None)
    assert cached.mode is Mode.CACHED and harness.provider.requests[1:] == []
    assert (cached.status, cached.reason, cached.evidence, cached.lowered_by) == (
        live.status,
        live.reason,
        live.evidence,
        live.lowered_by,
    )
    assert harness.service.saved_result(report_id) == cached
