"""Every verification code of a built case stops the interpretation before any request.

A built package is copied with one change (manifest pointer, checkpoint payload, case,
context), added to a fresh store and interpreted: the call raises its code and the
provider is never asked.
"""

from __future__ import annotations

import copy
import hashlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    prepared_context,
    reply,
    scripted_gateway,
)

from viano_bug_analysis.analysis import (
    CaseInterpreter,
    InterpretationError,
    InterpretationLimits,
    OutcomeStatus,
)
from viano_bug_analysis.case import CaseBuilderLimits
from viano_bug_analysis.packages import PackageStore

CASE = "analysis/revisions/0001/canonical_case.json"
CHECKPOINT = "analysis/revisions/0001/checkpoints/case-built.json"
CONTEXT = "analysis/interpretations/0001/context.json"

Change = Callable[[dict[str, bytes]], None]


def _json(members: dict[str, bytes], name: str) -> dict:  # type: ignore[type-arg]
    return json.loads(members[name])  # type: ignore[no-any-return]


def _put(members: dict[str, bytes], name: str, obj: object) -> None:
    members[name] = json.dumps(obj, sort_keys=True, indent=2).encode("utf-8")


def _pointer_to(target: str, *, checkpoint_too: bool = False) -> Change:
    def change(members: dict[str, bytes]) -> None:
        manifest = _json(members, "manifest.json")
        manifest["pointers"]["canonical_case"] = target
        _put(members, "manifest.json", manifest)
        if checkpoint_too:
            payload = _json(members, CHECKPOINT)
            payload["canonical_case"] = target
            _put(members, CHECKPOINT, payload)

    return change


def _checkpoint(edit: Callable[[dict], None]) -> Change:  # type: ignore[type-arg]
    def change(members: dict[str, bytes]) -> None:
        payload = _json(members, CHECKPOINT)
        edit(payload)
        _put(members, CHECKPOINT, payload)

    return change


def _edit_json(name: str, edit: Callable[[dict], None]) -> Change:  # type: ignore[type-arg]
    def change(members: dict[str, bytes]) -> None:
        obj = _json(members, name)
        edit(obj)
        _put(members, name, obj)

    return change


def _drop_completeness_record(members: dict[str, bytes]) -> None:
    """Q0001 removed from the case; the checkpoint's hash follows, so only the case's
    content is wrong."""
    case = _json(members, CASE)
    case["records"] = [r for r in case["records"] if r["id"] != "Q0001"]
    data = json.dumps(case).encode("utf-8")
    members[CASE] = data
    payload = _json(members, CHECKPOINT)
    payload["case_sha256"] = hashlib.sha256(data).hexdigest()
    _put(members, CHECKPOINT, payload)


def _copy_with(source: Path, target: Path, change: Change) -> Path:
    with zipfile.ZipFile(source) as zin:
        members = {info.filename: zin.read(info.filename) for info in zin.infolist()}
        infos = zin.infolist()
    change(members)
    with zipfile.ZipFile(target, "w") as zout:
        for info in infos:
            zout.writestr(info, members[info.filename])
    return target


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (_pointer_to("original/intake.json"), "interpretation.pointer_invalid"),
        (
            _pointer_to("original/intake.json", checkpoint_too=True),
            "interpretation.pointer_invalid",
        ),
        (
            _checkpoint(lambda p: p.update(case_id="other-case")),
            "interpretation.checkpoint_invalid",
        ),
        (_checkpoint(lambda p: p.update(analysis_revision=2)), "interpretation.checkpoint_invalid"),
        (_checkpoint(lambda p: p.pop("canonical_case")), "interpretation.checkpoint_invalid"),
        (
            _checkpoint(lambda p: p.update(raw_input_fingerprint="0" * 64)),
            "interpretation.checkpoint_invalid",
        ),
        (
            lambda m: m.__setitem__(CHECKPOINT, b"{not json"),
            "interpretation.checkpoint_invalid",
        ),
        (_drop_completeness_record, "interpretation.case_invalid"),
        (lambda m: m.__setitem__(CASE, b"[1, 2]"), "interpretation.case_hash_mismatch"),
    ],
    ids=[
        "pointer-other-member",
        "pointer-and-checkpoint-outside-revision",
        "checkpoint-other-case",
        "checkpoint-other-revision",
        "checkpoint-without-canonical-case",
        "checkpoint-other-raw-fingerprint",
        "checkpoint-not-json",
        "case-without-q0001",
        "case-bytes-changed",
    ],
)
async def test_each_verification_code_stops_before_any_request(
    tmp_path: Path, change: Change, code: str
) -> None:
    store = built_store(tmp_path / "one")
    changed = _copy_with(store.current(CASE_ID, PACKAGE_ID).path, tmp_path / "changed.zip", change)
    other = PackageStore.init(tmp_path / "two")
    other.add(changed)
    before = other.current(CASE_ID, PACKAGE_ID).generation
    gateway, provider = scripted_gateway(reply({}))
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(other, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert info.value.code == code
    assert provider.requests == []
    assert other.current(CASE_ID, PACKAGE_ID).generation == before


async def test_a_changed_preserved_context_stops_before_any_request(tmp_path: Path) -> None:
    store = built_store(tmp_path / "one")
    gateway, provider = scripted_gateway(reply({}))  # an invalid answer: rejected
    first = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.ERROR and len(provider.requests) == 1

    def change(members: dict[str, bytes]) -> None:
        context = _json(members, CONTEXT)
        context["catalogue"] = context["catalogue"][:-1]
        _put(members, CONTEXT, context)

    changed = _copy_with(store.current(CASE_ID, PACKAGE_ID).path, tmp_path / "c.zip", change)
    other = PackageStore.init(tmp_path / "two")
    other.add(changed)
    fresh, fresh_provider = scripted_gateway(reply({}))
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(other, fresh).interpret(CASE_ID, PACKAGE_ID, attempt_id="second")
    assert info.value.code == "interpretation.context_invalid"
    assert fresh_provider.requests == []


@pytest.mark.parametrize(
    ("case_id", "package_id", "field"),
    [
        ("../../etc", PACKAGE_ID, "case_id"),
        (CASE_ID, "supplied/../x", "package_id"),
        ("", "p", "case_id"),
    ],
)
async def test_a_malformed_identity_is_an_input_error_not_storage(
    tmp_path: Path, case_id: str, package_id: str, field: str
) -> None:
    store = built_store(tmp_path)
    gateway, provider = scripted_gateway(reply({}))
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, gateway).interpret(case_id, package_id)
    assert info.value.code == "interpretation.identity_invalid"
    assert info.value.details["field"] == field
    assert provider.requests == []


async def test_case_limits_are_the_ones_used_to_check_original(tmp_path: Path) -> None:
    """CaseInterpreter(case_limits=...) re-checks original/ with those limits (not the
    defaults): a bound below the supplied originals stops it, the default completes."""
    store = built_store(tmp_path)
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        original_bytes = sum(reader.size(n) for n in reader.original_files())
    small = CaseBuilderLimits(max_original_bytes=original_bytes - 1)
    gateway, provider = scripted_gateway(reply(answer_for(prepared_context(store).catalogue)))
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, gateway, case_limits=small).interpret(CASE_ID, PACKAGE_ID)
    assert info.value.code == "interpretation.limit.max_original_bytes"
    assert provider.requests == []
    exact = CaseBuilderLimits(max_original_bytes=original_bytes)
    done = await CaseInterpreter(store, gateway, case_limits=exact).interpret(CASE_ID, PACKAGE_ID)
    assert done.status is OutcomeStatus.COMPLETED
    assert len(provider.requests) == 1


async def test_a_context_prepared_under_another_prompt_version_is_stale(tmp_path: Path) -> None:
    store = built_store(tmp_path / "one")
    gateway, provider = scripted_gateway(reply({}))  # rejected: the preparation stays
    first = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.ERROR and len(provider.requests) == 1
    checkpoint = "analysis/interpretations/0001/checkpoints/case-interpreting.json"
    changed = _copy_with(
        store.current(CASE_ID, PACKAGE_ID).path,
        tmp_path / "c.zip",
        _edit_json(checkpoint, lambda p: p.update(prompt_version="case_interpretation_v0")),
    )
    other = PackageStore.init(tmp_path / "two")
    other.add(changed)
    fresh, fresh_provider = scripted_gateway(reply({}))
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(other, fresh).interpret(CASE_ID, PACKAGE_ID, attempt_id="second")
    assert info.value.code == "interpretation.context_stale"
    assert info.value.details["recorded_prompt_version"] == "case_interpretation_v0"
    assert fresh_provider.requests == []


def _long_comment_intake() -> dict:  # type: ignore[type-arg]
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["comments"] = [{"text": "gamma " * 3000, "author": "tester-b"}]
    return intake


async def test_a_context_the_current_limits_would_build_otherwise_is_stale(
    tmp_path: Path,
) -> None:
    """Prepared with texts shortened under a small context limit; replayed under the
    default limit the same case gives another context: stale, nothing sent. Under the
    limits it was prepared with it is reused and the call goes out."""
    store = built_store(tmp_path, _long_comment_intake())
    whole = prepared_context(store)
    small = InterpretationLimits(max_context_bytes=len(whole.context_bytes) - 5_000)
    gateway, provider = scripted_gateway(reply({}), reply({}))
    first = await CaseInterpreter(store, gateway, limits=small).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.ERROR and len(provider.requests) == 1
    generation = store.current(CASE_ID, PACKAGE_ID).generation
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID, attempt_id="b")
    assert info.value.code == "interpretation.context_stale"
    assert len(provider.requests) == 1
    assert store.current(CASE_ID, PACKAGE_ID).generation == generation
    again = await CaseInterpreter(store, gateway, limits=small).interpret(
        CASE_ID, PACKAGE_ID, attempt_id="b"
    )
    assert again.status is OutcomeStatus.ERROR and len(provider.requests) == 2


async def test_a_raised_limit_that_builds_the_same_context_reuses_it(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    gateway, provider = scripted_gateway(reply({}), reply({}))
    first = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.ERROR
    raised = InterpretationLimits(max_context_bytes=4 << 20)
    again = await CaseInterpreter(store, gateway, limits=raised).interpret(
        CASE_ID, PACKAGE_ID, attempt_id="b"
    )
    assert again.status is OutcomeStatus.ERROR and len(provider.requests) == 2
    assert provider.requests[0].messages[1].content == provider.requests[1].messages[1].content


async def test_a_completed_interpretation_is_reused_under_other_limits(tmp_path: Path) -> None:
    """Staleness is checked only before sending: a completed phase prepared with texts
    shortened is re-verified against its own context and reused under the defaults."""
    store = built_store(tmp_path, _long_comment_intake())
    whole = prepared_context(store)
    small = InterpretationLimits(max_context_bytes=len(whole.context_bytes) - 5_000)
    answer = answer_for(prepared_context(store, limits=small).catalogue)
    gateway, provider = scripted_gateway(reply(answer))
    first = await CaseInterpreter(store, gateway, limits=small).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.COMPLETED
    again = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert again.status is OutcomeStatus.COMPLETED and again.reused
    assert len(provider.requests) == 1
