"""The evidence rule against the weakest possible model: a scripted provider that calls
every report first-hand (DIRECT, NONE), through the real evaluation flow (publish, the
service, the gateway, a ledger). No relayed, unclear or injected case of the dev set and
no tweet by an outsider or the media may end COMPLETED; the first-hand cases that say so
in their own words still do. The dev set holds reproduced accounts, quoted witnesses,
retweets, hopes and opinions too (ids starting relay-/unclear-)."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelgate.providers import ScriptedProvider
from trace_app.evaluation import EvalCase, load_cases, load_crisislex, run_evaluation
from trace_app.investigation.model_settings import ModelSettings

REPO = Path(__file__).resolve().parents[2]
DEV_SET = REPO / "eval" / "trace_dev.jsonl"
ALWAYS_DIRECT = {"attribution": "DIRECT", "referenced_source": "NONE"}


def crisislex_files(real_data_dir: Path) -> list[Path]:
    folder = real_data_dir / "crisis" / "crisislex_t26"
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        pytest.skip(f"CrisisLexT26 files not found under {folder} (set REAL_DATA_DIR)")
    return files


async def _always_direct(cases: list[EvalCase], workdir: Path) -> dict[str, str]:
    provider = ScriptedProvider([ALWAYS_DIRECT] * len(cases), model="always-direct")
    settings = ModelSettings.from_env(
        {"TRACE_MODEL": "always-direct", "TRACE_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    report = await run_evaluation(
        cases, settings, workdir=workdir, provider_factory=lambda config: provider
    )
    assert report.ledger_requests == len(cases)  # one call each: the rule asked nothing
    return {o.id: o.status for o in report.outcomes}


async def test_always_direct_completes_no_relayed_unclear_or_injected_dev_case(
    tmp_path: Path,
) -> None:
    cases = load_cases(DEV_SET)
    statuses = await _always_direct(cases, tmp_path)
    for case in cases:
        if case.label != "DIRECT" or case.id.startswith("injection"):
            assert statuses[case.id] == "NEEDS_REVIEW", case.id
    direct = [c for c in cases if c.label == "DIRECT" and not c.id.startswith("injection")]
    missed = [c.id for c in direct if statuses[c.id] != "COMPLETED"]
    # the first-hand cases complete when the writer says so in the first person; a log
    # line that leaves out its subject ("Registered at the desk ...") goes to a person
    assert missed == ["direct-desk-register-no-pronoun"]


@pytest.mark.realdata
async def test_always_direct_completes_no_tweet_by_outsiders_or_media(
    tmp_path: Path, real_data_dir: Path
) -> None:
    cases, skipped = load_crisislex(crisislex_files(real_data_dir))
    not_first_hand = [c for c in cases if c.label != "DIRECT"]
    assert len(not_first_hand) > 1000 and skipped
    statuses = await _always_direct(not_first_hand, tmp_path)
    completed = sorted(case_id for case_id, status in statuses.items() if status == "COMPLETED")
    assert completed == []
