"""Crash recovery: a child process killed at each step of each of the three
publications; the next run recovers by checkpoint replay and never pays twice for a
confirmed round."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from interp_support import (
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    members,
    prepared_context,
    reply,
    scripted_gateway,
)

from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.packages import PUBLISH_STEPS, PackageStore

CHILD = Path(__file__).with_name("interp_crash_child.py")
REPO = Path(__file__).resolve().parents[3]


def _confirmed_round(publication: int, step: str) -> bool:
    """Was the round generation durable when the child died?"""
    if publication == 3:
        return True
    return publication == 2 and PUBLISH_STEPS.index(step) >= PUBLISH_STEPS.index("renamed")


@pytest.mark.parametrize("how", ["exit", "sigkill"])
@pytest.mark.parametrize("step", PUBLISH_STEPS)
@pytest.mark.parametrize("publication", [1, 2, 3])
async def test_killed_child_recovers(tmp_path: Path, publication: int, step: str, how: str) -> None:
    store = built_store(tmp_path)
    originals = {n: d for n, d in members(store).items() if n.startswith("original/")}
    good = answer_for(prepared_context(store).catalogue)
    answer_file = tmp_path / "answer.json"
    answer_file.write_text(json.dumps(good), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{REPO / 'src'}{os.pathsep}{CHILD.parent}")
    child = subprocess.run(
        [
            *(sys.executable, str(CHILD), str(store.root), str(answer_file)),
            *(str(publication), step, how),
        ],
        env=env,
        capture_output=True,
        timeout=60,
    )
    expected_status = 86 if how == "exit" else -signal.SIGKILL
    assert child.returncode == expected_status, child.stderr.decode()[-2000:]

    reopened = PackageStore.open(store.root)  # repairs the index
    gateway, provider = scripted_gateway(reply(good))
    result = await CaseInterpreter(reopened, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.COMPLETED
    expected_requests = 0 if _confirmed_round(publication, step) else 1
    assert len(provider.requests) == expected_requests
    after = members(reopened)
    assert {n: d for n, d in after.items() if n.startswith("original/")} == originals
    assert len([n for n in after if "/rounds/" in n]) == 1
    assert not list((reopened.root / "packages").rglob(".tmp-*"))
    again = await CaseInterpreter(reopened, scripted_gateway()[0]).interpret(CASE_ID, PACKAGE_ID)
    assert again.status is OutcomeStatus.COMPLETED and again.reused
