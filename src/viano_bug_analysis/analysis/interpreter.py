"""CaseInterpreter: the durable lifecycle of Case Interpretation v1.

``await CaseInterpreter(store, gateway).interpret(case_id, package_id)`` holds the
(case, package) operation lock for the whole call (a concurrent dispatch raises
``LockBusy``) and moves the package through at most three atomic generations:

1. *prepare*: verify the built case (checkpoint, pointer, identities, raw-input
   fingerprint, case hash), build the context, publish ``context.json`` with a
   ``case-interpreting`` checkpoint; the phase becomes INTERPRETING_CASE;
2. *round*: ``CaseLLMRunner`` dispatches one attempt and publishes the round record;
3. *publish*: validate the answer against the context's catalogue and publish the
   accepted JSON, its Markdown, a ``case-interpreted`` checkpoint and the pointers
   ``interpretation_context``, ``case_interpretation``, ``case_interpretation_summary``.

An invalid answer publishes ``errors/<attempt-hash>.json`` instead (no pointer, no
summary); the phase stays INTERPRETING_CASE. Every step first looks at what the
current generation already holds, so a crash at any point is recovered by running
``interpret`` again (checkpoint replay): confirmed preparation and confirmed rounds are
reused, never rebuilt or re-sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelgate.types import ModelRequest
from viano_bug_analysis.analysis.budget import ContextBudget
from viano_bug_analysis.analysis.case_access import (
    BuiltCase,
    check_identities,
    verify_built_case,
)
from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.analysis.output_model import InterpretationOutput
from viano_bug_analysis.analysis.prompt_builder import (
    PROMPT_VERSION,
    PreparedContext,
    PromptBuilder,
    load_context,
    request_schema,
)
from viano_bug_analysis.analysis.publication import (
    CHECKPOINT_INTERPRETED,
    CHECKPOINT_INTERPRETING,
    INTERPRETATION_POINTERS,
    Verdict,
    accept_or_reject,
    find_checkpoint,
    verify_published,
)
from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.errors import LockBusy, PackageError, StoreError
from viano_bug_analysis.llm.gateway import LLMGateway, OutcomeStatus, utc_now
from viano_bug_analysis.llm.rounds import (
    ATTEMPT_ID_RE,
    AttemptKey,
    InterpretationLayout,
    attempt_hash,
    rounds_of,
)
from viano_bug_analysis.llm.runner import CaseLLMRunner, RoundResult, read_rounds, run_blocking
from viano_bug_analysis.packages import (
    INTERPRETATIONS_PREFIX,
    PHASE_INTERPRETING_CASE,
    PackageGeneration,
    PackageOperation,
    PackageReader,
    PackageStore,
    PackageWriter,
    canonical_json,
)

DEFAULT_ATTEMPT_ID = "default"

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class InterpretationResult:
    """What ``interpret`` returns. ``status`` is one of the five outcomes.

    ``reused``: the result came from what the package already held (no request sent by
    this call). ``violations``: why an answer was rejected (ERROR). ``error``: the
    gateway's error for RETRY_PENDING / DEFERRED / BLOCKED / ERROR.
    """

    status: OutcomeStatus
    case_id: str
    package_id: str
    analysis_revision: int
    package_generation: int
    interpretation_index: int
    attempt_id: str
    attempt_hash: str
    reused: bool = False
    due_at: str | None = None
    round_ref: str | None = None
    rejection_ref: str | None = None
    pointers: dict[str, str] = field(default_factory=dict)
    violations: list[dict[str, str]] = field(default_factory=list)
    error: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "case_id": self.case_id,
            "package_id": self.package_id,
            "analysis_revision": self.analysis_revision,
            "package_generation": self.package_generation,
            "interpretation_index": self.interpretation_index,
            "attempt_id": self.attempt_id,
            "attempt_hash": self.attempt_hash,
            "reused": self.reused,
            "due_at": self.due_at,
            "round_ref": self.round_ref,
            "rejection_ref": self.rejection_ref,
            "pointers": dict(self.pointers),
            "violations": list(self.violations),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class _Ready:
    """What a dispatch needs once the case is verified and prepared."""

    case: BuiltCase
    layout: InterpretationLayout
    prepared: PreparedContext
    request: ModelRequest
    key: AttemptKey
    binding: dict[str, Any]
    generation: PackageGeneration


class _Session:
    """The operation lock of one ``interpret`` call and the reader it keeps open across
    the dispatch. ``close`` (idempotent) closes the reader and releases the lock; the
    storage steps call it, and ``run_blocking`` calls it on a session that a
    cancellation made it drop, so a lock is never left taken."""

    def __init__(self, op: PackageOperation) -> None:
        self.op = op
        self.reader: PackageReader | None = None
        self.state: InterpretationResult | _Ready | None = None
        self.held = False

    def acquire(self) -> None:
        self.op.__enter__()  # raises LockBusy; nothing is held then
        self.held = True

    def close(self) -> None:
        reader, self.reader = self.reader, None
        try:
            if reader is not None:
                reader.close()
        finally:
            if self.held:
                self.held = False
                self.op.__exit__(None, None, None)


def _storage(exc: StoreError | PackageError | OSError) -> InterpretationError:
    code = getattr(exc, "code", "os_error")
    return InterpretationError(
        f"package store failure: {exc}", code="interpretation.storage", cause=str(code)
    )


class CaseInterpreter:
    """Interprets built cases of a :class:`PackageStore` through an :class:`LLMGateway`."""

    def __init__(
        self,
        store: PackageStore,
        gateway: LLMGateway,
        *,
        limits: InterpretationLimits | None = None,
        case_limits: CaseBuilderLimits | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.limits = limits or InterpretationLimits()
        self.case_limits = case_limits or CaseBuilderLimits()
        self.runner = CaseLLMRunner(gateway, InterpretationOutput)
        # the output schema is built and checked against its meta-schema once (~70 ms);
        # here, so that the first interpretation does not wait for it
        request_schema()
        self._progress: Progress | None = progress

    def _builder(self) -> PromptBuilder:
        """The PromptBuilder of this interpreter: its limits, and the context budget of
        the gateway's model window when the configuration names one (budget.py)."""
        window = getattr(self.gateway, "context_window_tokens", None)
        budget = None if window is None else ContextBudget(window, self.gateway.max_output_tokens)
        return PromptBuilder(self.limits, budget)

    async def interpret(
        self,
        case_id: str,
        package_id: str,
        *,
        attempt_id: str = DEFAULT_ATTEMPT_ID,
        resume: bool = False,
    ) -> InterpretationResult:
        """Run (or resume, or reuse) the interpretation of the current analysis revision.

        ``resume=True`` is the explicit lifecycle resumption after a BLOCKED attempt: it
        records that ``attempt_id`` (which must be new) continues the phase.
        Raises ``LockBusy`` when another operation holds the package, and
        ``InterpretationError`` for storage and input problems.
        """
        if not isinstance(attempt_id, str) or not ATTEMPT_ID_RE.match(attempt_id):
            raise InterpretationError(
                "attempt_id must be 1-64 characters of letters, digits, '.', '_', ':' or '-'",
                code="interpretation.attempt_id_invalid",
            )
        check_identities(case_id, package_id)
        try:
            session = _Session(self.store.lock(case_id, package_id))
            try:
                return await self._interpret(session, case_id, package_id, attempt_id, resume)
            finally:
                if session.held:  # the last storage step normally released it already
                    await run_blocking(session.close)
        except (LockBusy, InterpretationError):
            raise
        except StoreError as exc:
            if exc.code == "store.not_found":
                raise InterpretationError(
                    str(exc.message), code="interpretation.package_not_found"
                ) from None
            raise _storage(exc) from None
        except (PackageError, OSError) as exc:
            raise _storage(exc) from None
        except (ValueError, KeyError) as exc:  # unreadable or incomplete JSON in the package
            raise InterpretationError(
                f"a phase artifact in the package is unreadable: {exc}",
                code="interpretation.storage",
            ) from None

    async def _interpret(
        self, session: _Session, case_id: str, package_id: str, attempt_id: str, resume: bool
    ) -> InterpretationResult:
        # Package work runs in storage threads (run_blocking): taking the lock, reading
        # and verifying a generation, building a writer and publishing it (fsyncs, index
        # commit) never block the event loop, so independent cases overlap their disk
        # waits. The first step takes the lock; the last one releases it.
        loop = asyncio.get_running_loop()
        op = session.op

        report = self._progress

        def progress(message: str) -> None:  # called from a storage thread; runs in order
            # without a listener nothing is scheduled: each wake-up of the event loop
            # from a storage thread costs a hand-over of the GIL
            if report is not None:
                loop.call_soon_threadsafe(report, message)

        await run_blocking(self._begin, session, case_id, package_id, attempt_id, resume, progress)
        ready = session.state
        if isinstance(ready, InterpretationResult):
            return ready
        assert ready is not None and session.reader is not None
        case, layout, key = ready.case, ready.layout, ready.key
        generation = ready.generation
        if report is not None:
            report("dispatching to the model gateway")
        result = await self.runner.run(
            op, session.reader, layout, key, ready.request, ready.binding
        )
        if result.reader is not None:  # open on the round's generation: the session keeps it
            previous, session.reader = session.reader, result.reader
            previous.close()
        base = dict(
            case_id=case_id,
            package_id=package_id,
            analysis_revision=case.analysis_revision,
            interpretation_index=layout.index,
            attempt_id=attempt_id,
            attempt_hash=key.attempt_hash,
            reused=result.reused,
            round_ref=result.ref,
        )
        if result.generation is not None:
            generation = result.generation
        if result.status is OutcomeStatus.DEFERRED:
            return InterpretationResult(
                OutcomeStatus.DEFERRED,
                package_generation=generation.generation,
                error=result.deferred_error,
                **base,  # type: ignore[arg-type]
            )
        outcome = result.outcome
        if result.status in (OutcomeStatus.RETRY_PENDING, OutcomeStatus.BLOCKED):
            return InterpretationResult(
                result.status,
                package_generation=generation.generation,
                due_at=outcome.get("due_at"),
                error=outcome.get("error"),
                **base,  # type: ignore[arg-type]
            )
        assert result.record is not None and result.ref is not None
        if report is not None:
            report("validating the answer")
        generation, verdict = await run_blocking(
            self._publish_verdict, session, generation, case, layout, ready.prepared, key, result
        )
        if report is not None:
            report("published" if verdict.accepted else "rejected the answer")
        return InterpretationResult(
            OutcomeStatus.COMPLETED if verdict.accepted else OutcomeStatus.ERROR,
            package_generation=generation.generation,
            rejection_ref=verdict.rejection_ref,
            pointers=verdict.pointers,
            violations=verdict.violations,
            error=None if verdict.accepted else outcome.get("error"),
            **base,  # type: ignore[arg-type]
        )

    def _begin(
        self,
        session: _Session,
        case_id: str,
        package_id: str,
        attempt_id: str,
        resume: bool,
        progress: Progress,
    ) -> _Session:
        """Take the lock, then :meth:`_before_dispatch`; in a storage thread. A reused
        completion (or a failure) releases the lock at once."""
        session.acquire()
        try:
            session.state = self._before_dispatch(
                session, case_id, package_id, attempt_id, resume, progress
            )
        except BaseException:
            session.close()
            raise
        if isinstance(session.state, InterpretationResult):
            session.close()
        return session

    def _before_dispatch(
        self,
        session: _Session,
        case_id: str,
        package_id: str,
        attempt_id: str,
        resume: bool,
        progress: Progress,
    ) -> InterpretationResult | _Ready:
        """Verification, preparation (published once) and the resumption check. Returns
        the reused completion, or what the dispatch needs (and leaves ``session.reader``
        open on the generation that the round extends)."""
        op = session.op
        # the reader that read the manifest; the session closes it on every path
        generation, reader = op.open_current()
        session.reader = reader
        case = verify_built_case(reader, case_id, package_id, self.limits, self.case_limits)
        layout = self._layout(reader, case)
        progress("verified the built case")
        done = find_checkpoint(reader, CHECKPOINT_INTERPRETED, case.analysis_revision, layout)
        if done is not None:
            return self._reused_completion(reader, case, layout, attempt_id)
        prepared = self._prepared(reader, case, layout)
        if prepared is None:
            prepared = self._builder().prepare(case)
            writer = self._preparation(reader, case, layout, prepared)
            # the reader that validated the new generation replaces the base's
            generation, published = op.publish_open(writer)
            session.reader = published
            reader.close()
            progress("published the interpretation context")
        builder = self._builder()
        request = builder.request(
            prepared,
            self.gateway.max_output_tokens,
            distinct_ids=self.gateway.grammar_keeps_ids_distinct,
            answer_tokens=getattr(self.gateway, "answer_tokens", None),
        )
        key = AttemptKey(
            attempt_id=attempt_id,
            attempt_hash=attempt_hash(
                case_id=case_id,
                package_id=package_id,
                analysis_revision=case.analysis_revision,
                index=layout.index,
                attempt_id=attempt_id,
            ),
            request_fingerprint=prepared.request_fingerprint(request, builder.budget),
            configuration_fingerprint=self.gateway.configuration_fingerprint(),
        )
        binding = self._binding(case, layout, prepared)
        assert session.reader is not None  # open on ``generation``
        resumed = self._check_blocked(op, session.reader, layout, key, resume, binding)
        if resumed is not None:
            session.reader.close()
            session.reader = None
            generation = resumed
            session.reader = generation.open(self.store.limits)
        return _Ready(case, layout, prepared, request, key, binding, generation)

    def _publish_verdict(
        self,
        session: _Session,
        generation: PackageGeneration,
        case: BuiltCase,
        layout: InterpretationLayout,
        prepared: PreparedContext,
        key: AttemptKey,
        result: RoundResult,
    ) -> tuple[PackageGeneration, Verdict]:
        """Validate the round's answer and publish the acceptance or the rejection
        report (nothing when a replay finds it published), then release the lock; in a
        storage thread."""
        assert result.record is not None and result.ref is not None
        try:
            reader = session.reader
            if reader is None or reader.path != generation.path:
                # not open on the generation the answer extends: open that one
                session.reader = None
                if reader is not None:
                    reader.close()
                session.reader = reader = generation.open(self.store.limits)
            writer, verdict = accept_or_reject(
                reader, case, layout, prepared, key, result.record, result.ref, self.limits
            )
            if writer is not None:
                generation = session.op.publish(writer)
        finally:
            session.close()
        return generation, verdict

    # -- steps --------------------------------------------------------------------------

    def _layout(self, reader: PackageReader, case: BuiltCase) -> InterpretationLayout:
        """The interpretation index of this revision: the one its case-interpreting
        checkpoint names, else the next free one."""
        used: set[int] = set()
        for name in reader.names():
            if name.startswith(INTERPRETATIONS_PREFIX):
                head = name[len(INTERPRETATIONS_PREFIX) :].split("/", 1)[0]
                if head.isdigit():
                    used.add(int(head))
        for index in sorted(used):
            layout = InterpretationLayout(index)
            if find_checkpoint(reader, CHECKPOINT_INTERPRETING, case.analysis_revision, layout):
                return layout
        return InterpretationLayout(max(used, default=0) + 1)

    def _prepared(
        self, reader: PackageReader, case: BuiltCase, layout: InterpretationLayout
    ) -> PreparedContext | None:
        checkpoint = find_checkpoint(
            reader, CHECKPOINT_INTERPRETING, case.analysis_revision, layout
        )
        if checkpoint is None:
            return None
        return load_context(reader, layout, case, checkpoint, self._builder())

    def _preparation(
        self,
        reader: PackageReader,
        case: BuiltCase,
        layout: InterpretationLayout,
        prepared: PreparedContext,
    ) -> PackageWriter:
        """The writer of the preparation generation, on the generation ``reader`` holds."""
        writer = PackageWriter(reader)
        writer.add_bytes(layout.context, prepared.context_bytes)
        writer.update_manifest(phase=PHASE_INTERPRETING_CASE)
        writer.add_checkpoint(
            CHECKPOINT_INTERPRETING,
            layout.interpreting_checkpoint,
            {
                "interpretation_index": layout.index,
                "context": layout.context,
                "context_sha256": prepared.context_sha256,
                "case_sha256": case.case_sha256,
                "case_member": case.case_member,
                "raw_input_fingerprint": case.raw_input_fingerprint,
                "prompt_version": PROMPT_VERSION,
            },
        )
        return writer

    def _binding(
        self, case: BuiltCase, layout: InterpretationLayout, prepared: PreparedContext
    ) -> dict[str, Any]:
        return {
            "case_id": case.case_id,
            "package_id": case.package_id,
            "analysis_revision": case.analysis_revision,
            "interpretation_index": layout.index,
            "case_sha256": case.case_sha256,
            "context_sha256": prepared.context_sha256,
        }

    def _check_blocked(
        self,
        op: PackageOperation,
        reader: PackageReader,
        layout: InterpretationLayout,
        key: AttemptKey,
        resume: bool,
        binding: dict[str, Any],
    ) -> PackageGeneration | None:
        """A new attempt after a BLOCKED one needs explicit resumption (``resume=True``),
        recorded as ``resumptions/<attempt-hash>.json``; returns the new generation."""
        names = reader.names()
        all_rounds = rounds_of(names, layout)
        if resume and key.attempt_hash in all_rounds:
            raise InterpretationError(
                f"attempt {key.attempt_id!r} already has rounds; resumption needs a new attempt_id",
                code="interpretation.resumption_needs_new_attempt_id",
            )
        if key.attempt_hash in all_rounds or layout.resumption(key.attempt_hash) in names:
            return None  # an attempt already under way, or already resumed
        blocked = []
        for hash_, refs in sorted(all_rounds.items()):
            last = read_rounds(reader, layout, hash_)[-1][1]
            if last["outcome"]["status"] == OutcomeStatus.BLOCKED.value:
                blocked.append({"attempt_id": last["attempt_id"], "round_ref": refs[-1]})
        if not blocked:
            if resume:
                raise InterpretationError(
                    "no attempt of this interpretation is BLOCKED; there is nothing to resume",
                    code="interpretation.nothing_to_resume",
                )
            return None
        if not resume:
            raise InterpretationError(
                "an earlier attempt is BLOCKED; resume explicitly with a new attempt_id "
                "(interpret(..., attempt_id=NEW, resume=True) or `viano interpret --resume`)",
                code="interpretation.resumption_required",
                blocked=[b["attempt_id"] for b in blocked],
            )
        writer = PackageWriter(reader)
        record = {
            "format": "viano-interpretation-resumption-v1",
            **binding,
            "attempt_id": key.attempt_id,
            "attempt_hash": key.attempt_hash,
            "resumes": blocked,
            "resumed_at": utc_now().isoformat(),
        }
        writer.add_bytes(layout.resumption(key.attempt_hash), canonical_json(record))
        return op.publish(writer)

    def _reused_completion(
        self, reader: PackageReader, case: BuiltCase, layout: InterpretationLayout, attempt_id: str
    ) -> InterpretationResult:
        published = verify_published(reader, case, layout, self.limits)
        manifest = reader.require_manifest()
        return InterpretationResult(
            OutcomeStatus.COMPLETED,
            case_id=case.case_id,
            package_id=case.package_id,
            analysis_revision=case.analysis_revision,
            package_generation=manifest.package_generation,
            interpretation_index=layout.index,
            attempt_id=str(published.get("attempt_id", attempt_id)),
            attempt_hash=str(published.get("attempt_hash", "")),
            reused=True,
            round_ref=published.get("llm_outcome_ref"),
            pointers={k: manifest.pointers[k] for k in INTERPRETATION_POINTERS},
        )
