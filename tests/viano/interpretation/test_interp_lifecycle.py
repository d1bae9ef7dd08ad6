"""The durable lifecycle: three generations, pointers, immutable output, reuse."""

from __future__ import annotations

import copy
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    config,
    members,
    prepared_context,
    reply,
    scripted_gateway,
    write_package,
)

from viano_bug_analysis.analysis import (
    CaseInterpreter,
    InterpretationError,
    InterpretationLimits,
    OutcomeStatus,
)
from viano_bug_analysis.analysis import interpreter as interpreter_module
from viano_bug_analysis.analysis.case_access import verify_built_case
from viano_bug_analysis.analysis.publication import verify_published
from viano_bug_analysis.case import CaseBuilder, CaseBuilderLimits
from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.llm.rounds import InterpretationLayout
from viano_bug_analysis.packages import PackageReader, PackageStore, PackageWriter


async def test_accepted_interpretation_is_published_in_three_generations(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    before = members(store)
    built_generation = store.current(CASE_ID, PACKAGE_ID).generation
    catalogue = prepared_context(store).catalogue
    gateway, provider = scripted_gateway(reply(answer_for(catalogue)))

    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)

    assert result.status is OutcomeStatus.COMPLETED, result
    assert result.package_generation == built_generation + 3
    assert len(provider.requests) == 1
    after = members(store)
    for name, data in before.items():
        if name != "manifest.json":
            assert after[name] == data  # old members byte-identical
    base = "analysis/interpretations/0001/"
    manifest = json.loads(after["manifest.json"])
    assert manifest["phase"] == "INTERPRETING_CASE"
    assert manifest["pointers"]["interpretation_context"] == base + "context.json"
    assert manifest["pointers"]["case_interpretation"] == base + "case_interpretation.json"
    assert manifest["pointers"]["case_interpretation_summary"] == base + "case_interpretation.md"
    names = [c["name"] for c in manifest["checkpoints"]]
    assert names[-2:] == ["case-interpreting", "case-interpreted"]
    wrapper = json.loads(after[base + "case_interpretation.json"])
    assert wrapper["case_id"] == CASE_ID and wrapper["analysis_revision"] == 1
    assert wrapper["llm_outcome_ref"] == result.round_ref
    assert wrapper["interpretation"] == answer_for(catalogue)
    assert after[base + "case_interpretation.md"].startswith(b"# Case interpretation")


async def _completed(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = built_store(tmp_path)
    gateway, _ = scripted_gateway(reply(answer_for(prepared_context(store).catalogue)))
    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.COMPLETED
    return store, result


async def test_completed_phase_is_reused_after_a_configuration_change(tmp_path: Path) -> None:
    store, first = await _completed(tmp_path)
    generation = store.current(CASE_ID, PACKAGE_ID).generation
    other, provider = scripted_gateway(gateway_config=config(max_attempts=7))  # no replies
    again = await CaseInterpreter(store, other).interpret(CASE_ID, PACKAGE_ID, attempt_id="new")
    assert again.status is OutcomeStatus.COMPLETED and again.reused
    assert provider.requests == []
    assert store.current(CASE_ID, PACKAGE_ID).generation == generation
    assert again.pointers == first.pointers and again.attempt_id == "default"


async def test_published_output_is_immutable(tmp_path: Path) -> None:
    store, _ = await _completed(tmp_path)
    names = members(store)
    base = "analysis/interpretations/0001/"
    writer_names = [base + "case_interpretation.json", base + "case_interpretation.md"]
    with store.lock(CASE_ID, PACKAGE_ID) as op, op.current().open() as reader:
        writer = PackageWriter(reader)
        for name in writer_names:
            with pytest.raises(PackageError) as info:
                writer.add_bytes(name, b"{}")
            assert info.value.code == "package.frozen_member"
    assert members(store) == names


async def test_portable_replay_in_a_copied_store(tmp_path: Path) -> None:
    store, _ = await _completed(tmp_path / "one")
    copy_root = tmp_path / "elsewhere" / "store"
    shutil.copytree(store.root, copy_root)
    moved = PackageStore.open(copy_root)
    gateway, provider = scripted_gateway()
    again = await CaseInterpreter(moved, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert again.status is OutcomeStatus.COMPLETED and again.reused
    assert provider.requests == []


async def test_portable_replay_of_an_exported_package_mid_lifecycle(tmp_path: Path) -> None:
    """A package whose round is confirmed but not yet published moves to another store;
    there the round is reused: the provider is not paid twice."""
    store = built_store(tmp_path / "one")
    good = answer_for(prepared_context(store).catalogue)
    gateway, provider = scripted_gateway(reply(good))
    interpreter = CaseInterpreter(store, gateway)
    # stop right after the round generation: the publication step fails once
    original_accept = interpreter_module.accept_or_reject

    def fail_once(*args: object, **kwargs: object) -> object:
        raise RuntimeError("simulated failure before publication")

    interpreter_module.accept_or_reject = fail_once  # type: ignore[assignment]
    try:
        with pytest.raises(RuntimeError):
            await interpreter.interpret(CASE_ID, PACKAGE_ID)
    finally:
        interpreter_module.accept_or_reject = original_accept
    assert len(provider.requests) == 1
    exported = tmp_path / "exported.zip"
    shutil.copyfile(store.current(CASE_ID, PACKAGE_ID).path, exported)
    other = PackageStore.init(tmp_path / "two")
    other.add(exported)
    fresh, fresh_provider = scripted_gateway()
    result = await CaseInterpreter(other, fresh).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.COMPLETED and result.reused
    assert fresh_provider.requests == []


async def test_absent_case_is_never_built(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "store")
    store.add(write_package(tmp_path / "p.zip", BASIC_INTAKE))
    before = store.current(CASE_ID, PACKAGE_ID).generation
    gateway, provider = scripted_gateway(reply({}))
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert info.value.code == "interpretation.case_not_built"
    assert store.current(CASE_ID, PACKAGE_ID).generation == before
    assert provider.requests == []


async def test_unknown_package_is_an_interpretation_error(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    gateway, _ = scripted_gateway()
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, gateway).interpret("other-case", PACKAGE_ID)
    assert info.value.code == "interpretation.package_not_found"


def _rewrite(source: Path, target: Path, change: dict[str, bytes]) -> None:
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, change.get(info.filename, zin.read(info.filename)))


@pytest.mark.parametrize(
    ("member", "code"),
    [
        ("original/intake.json", "interpretation.raw_input_changed"),
        ("original/server.log", "interpretation.raw_input_changed"),
        ("analysis/revisions/0001/canonical_case.json", "interpretation.case_hash_mismatch"),
    ],
)
def test_verification_before_any_request(tmp_path: Path, member: str, code: str) -> None:
    store = built_store(tmp_path)
    changed = tmp_path / "changed.zip"
    _rewrite(store.current(CASE_ID, PACKAGE_ID).path, changed, {member: b'{"changed": true}'})
    with PackageReader(changed) as reader, pytest.raises(InterpretationError) as info:
        verify_built_case(reader, CASE_ID, PACKAGE_ID, InterpretationLimits(), CaseBuilderLimits())
    assert info.value.code == code


def test_identities_come_from_the_manifest(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    renamed = tmp_path / "other-case__other-package.zip"
    shutil.copyfile(store.current(CASE_ID, PACKAGE_ID).path, renamed)
    with PackageReader(renamed) as reader:
        with pytest.raises(InterpretationError) as info:
            verify_built_case(
                reader, "other-case", PACKAGE_ID, InterpretationLimits(), CaseBuilderLimits()
            )
        assert info.value.code == "interpretation.identity_mismatch"
        case = verify_built_case(
            reader, CASE_ID, PACKAGE_ID, InterpretationLimits(), CaseBuilderLimits()
        )
    assert case.case_id == CASE_ID


async def test_changed_inputs_need_a_new_revision_and_get_a_new_interpretation(
    tmp_path: Path,
) -> None:
    store, first = await _completed(tmp_path)
    old = {n: d for n, d in members(store).items() if n.startswith("analysis/")}
    changed = copy.deepcopy(BASIC_INTAKE)
    changed["observations"].append("The draft also loses its subject line.")
    store.add(write_package(tmp_path / "changed.zip", changed), replace_inputs=True)
    gateway, provider = scripted_gateway()
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert info.value.code == "interpretation.raw_input_changed"
    assert provider.requests == []

    CaseBuilder(store).build(CASE_ID, PACKAGE_ID)
    good = answer_for(prepared_context(store).catalogue)
    gateway, provider = scripted_gateway(reply(good))
    second = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert second.status is OutcomeStatus.COMPLETED
    assert (second.analysis_revision, second.interpretation_index) == (2, 2)
    assert second.pointers["case_interpretation"].startswith("analysis/interpretations/0002/")
    after = members(store)
    assert all(after[n] == d for n, d in old.items())  # revision 1's files untouched
    assert first.pointers["case_interpretation"] in after


async def test_tampered_publication_is_not_reused(tmp_path: Path) -> None:
    store, first = await _completed(tmp_path)
    tampered = tmp_path / "tampered.zip"
    summary = first.pointers["case_interpretation_summary"]
    _rewrite(store.current(CASE_ID, PACKAGE_ID).path, tampered, {summary: b"# forged\n"})
    with PackageReader(tampered) as reader:
        case = verify_built_case(
            reader, CASE_ID, PACKAGE_ID, InterpretationLimits(), CaseBuilderLimits()
        )
        with pytest.raises(InterpretationError) as info:
            verify_published(reader, case, InterpretationLayout(1), InterpretationLimits())
    assert info.value.code == "interpretation.published_invalid"
