"""The six steps of an investigation, in order. Nothing here imports the web layer.

1. Collect the incident's single-source reports; missing or over-long text is PARTIAL.
2. Build the menu of other sources named verbatim (more than eight is PARTIAL).
3. Compute the content fingerprint; a saved run with it is shown (CACHED / REPLAYED)
   without a call and without a passphrase.
4. Otherwise, behind the passphrase and the ledger, one call labels the report.
5. The decision rules (``rules.py``) say what follows, at most one comparison call; the
   evidence rule then reads the attribution cues found in the text (``attribution_cues``)
   and may lower COMPLETED to NEEDS_REVIEW, never anything else.
6. COMPLETED and NEEDS_REVIEW are saved as an ``InvestigationRun`` under the incident.

At most two model calls per investigation, each one attempt on one provider with a
45-second wall clock. Reading a saved result never calls a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from modelgate.errors import ModelGateError, NotConfigured, NotSent
from modelgate.fingerprint import fingerprint
from modelgate.gateway import Gateway, RetryPolicy
from modelgate.ledger import JsonFileLedger, Ledger, LedgerSnapshot
from modelgate.providers import Provider, ProviderConfig, build_provider
from modelgate.recording import Recorder
from modelgate.types import Answer, Usage, estimate_usage
from trace_app.investigation import evidence_store as store
from trace_app.investigation.answers import (
    SupportResult,
    attribution_result_type,
)
from trace_app.investigation.attribution_cues import Cue, find_cues
from trace_app.investigation.content_fingerprint import content_fingerprint
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.menu import MAX_MENU_SOURCES, Menu, build_menu, reports_from
from trace_app.investigation.model_settings import ModelSettings
from trace_app.investigation.outcome import (
    Citation,
    InvestigationResult,
    UsageTotals,
    reason_for_error,
    status_for_error,
)
from trace_app.investigation.requests import (
    attribution_request,
    support_request,
)
from trace_app.investigation.rules import (
    RULES_VERSION,
    Conclude,
    apply_evidence_rule,
    decide_after_attribution,
    decide_after_comparison,
    source_name,
)
from trace_app.investigation.vocabulary import Mode, Refusal, Status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database, make_engine
from trace_app.store.types import utc_now

log = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig], Provider]
LedgerFactory = Callable[[], Ledger]

SQL_LEDGER_NAME = "trace-model-usage"


@dataclass(frozen=True, slots=True)
class Prepared:
    """Steps 1-3 done: the evidence, the menu and the fingerprint of one investigation."""

    incident_id: str
    chosen: ReportEvidence
    reports: tuple[ReportEvidence, ...]
    menu: Menu
    fingerprint: str

    @property
    def cues(self) -> tuple[Cue, ...]:
        """The attribution cues in the chosen report's text: found only when a check needs
        them (a saved run shown again carries its stored ones)."""
        return find_cues(self.chosen.text)


class _CallLog:
    """Usage over the calls one investigation makes."""

    def __init__(self) -> None:
        self.sent = 0
        self.estimated = 0
        self.answers: list[Usage] = []

    def sending(self, estimated_tokens: int) -> None:
        self.sent += 1
        self.estimated += estimated_tokens

    def totals(self) -> UsageTotals:
        all_provider = bool(self.answers) and all(u.source == "provider" for u in self.answers)
        return UsageTotals(
            prompt_tokens=sum(u.prompt_tokens for u in self.answers),
            completion_tokens=sum(u.completion_tokens for u in self.answers),
            estimated_tokens=self.estimated,
            source="provider" if all_provider else "estimate",
        )


class InvestigationService:
    """Runs investigations for one Trace database with one model configuration."""

    def __init__(
        self,
        db: Database,
        *,
        model: ModelSettings,
        ledger_factory: LedgerFactory,
        provider_factory: ProviderFactory = build_provider,
        recorder: Recorder | None = None,
        clock: Callable[[], datetime] = utc_now,
        model_health: Callable[[], str | None] | None = None,
    ) -> None:
        self.db = db
        self.model = model
        self.ledger_factory = ledger_factory
        self.provider_factory = provider_factory
        self.recorder = recorder
        self.clock = clock
        # why the model server cannot take a call now (None: it can); checked before
        # anything is reserved, so an unhealthy server makes the check UNAVAILABLE
        self.model_health = model_health
        self._providers: dict[tuple[int, str, str], Provider] = {}
        self._stale: list[Provider] = []

    # --- reads (never call a model) -----------------------------------------------

    def prepare(self, report_id: str) -> Prepared | Conclude:
        """Steps 1-3. ``Conclude`` (PARTIAL) when the report cannot be investigated."""
        with self.db.session() as session:
            return self._prepare(session, report_id)

    def _prepare(self, session: Session, report_id: str) -> Prepared | Conclude:
        found = store.load_evidence(session, report_id)
        problem = found.chosen.text_problem
        if problem is not None:
            return Conclude(Status.PARTIAL, problem)
        menu = build_menu(found.chosen, found.sources)
        if menu.too_many:
            return Conclude(
                Status.PARTIAL,
                f"The report names {len(menu.names)} other sources; "
                f"at most {MAX_MENU_SOURCES} can be checked.",
            )
        content_fp = content_fingerprint(
            found.chosen,
            menu,
            found.named_reports,
            model=self.model.model,
            prompt_version=self.model.prompt_version,
        )
        return Prepared(
            found.incident_id,
            found.chosen,
            found.named_reports,
            menu,
            content_fp,
        )

    def without_call(self, report_id: str) -> InvestigationResult | None:
        """Steps 1-3 only: PARTIAL, or the saved run for this content, or ``None`` when
        only a live call could answer. Never calls a model."""
        prepared, saved = self._steps_one_to_three(report_id, use_saved=True)
        if isinstance(prepared, Conclude):
            return InvestigationResult(report_id, prepared.status, prepared.reason)
        return saved

    def _steps_one_to_three(
        self, report_id: str, *, use_saved: bool, session: Session | None = None
    ) -> tuple[Prepared | Conclude, InvestigationResult | None]:
        """One session (the caller's when given: only reads happen here): the evidence, the
        menu, the fingerprint and the saved run, if any."""
        with self._reading(session) as session:
            prepared = self._prepare(session, report_id)
            if isinstance(prepared, Conclude) or not use_saved:
                return prepared, None
            run = store.find_run(session, prepared.incident_id, prepared.fingerprint)
            return prepared, (store.result_from_run(run) if run is not None else None)

    @contextlib.contextmanager
    def _reading(self, session: Session | None) -> Iterator[Session]:
        """The caller's session, or a new one of this service's own."""
        if session is not None:
            yield session
            return
        with self.db.session() as own:
            yield own

    def _saved_run(self, prepared: Prepared) -> InvestigationResult | None:
        with self.db.session() as session:
            run = store.find_run(session, prepared.incident_id, prepared.fingerprint)
            return store.result_from_run(run) if run is not None else None

    def saved_result(self, report_id: str) -> InvestigationResult | None:
        """The newest saved run for the report, or ``None``. ``ReportNotFound`` if no report."""
        with self.db.session() as session:
            if not store.report_exists(session, report_id):
                raise store.ReportNotFound(f"No report with id {report_id!r}.")
            run = store.latest_run_for_report(session, report_id)
            return store.result_from_run(run) if run is not None else None

    def ledger_snapshot(self) -> LedgerSnapshot:
        """Counts and cap; ``LedgerUnavailable`` when the ledger cannot be read."""
        return self.ledger_factory().snapshot()

    # --- the investigation -----------------------------------------------------------

    async def investigate(
        self, report_id: str, passphrase: str | None, *, force_live: bool = False
    ) -> InvestigationResult:
        """Run the six steps for one report. ``ReportNotFound`` for an unknown id.

        ``force_live`` skips the saved-run lookup (``trace record-demo`` uses it); every
        guard (passphrase, key, ledger, cap) still applies.
        """
        before = self.before_any_call(report_id, passphrase, force_live=force_live)
        if not isinstance(before, Prepared):
            return before
        result = await self._live(before, force_live=force_live)
        log.info(
            "investigation report=%s status=%s requests=%d",
            report_id,
            result.status.value,
            result.requests_sent,
        )
        return self._with_latest_saved(result) if result.status.refused else result

    def before_any_call(
        self,
        report_id: str,
        passphrase: str | None,
        *,
        force_live: bool = False,
        session: Session | None = None,
    ) -> InvestigationResult | Prepared:
        """Steps 1-3 and the guards, synchronously: the answer when no model may be asked
        (PARTIAL, the saved run, or a refusal carrying the latest saved run), else what the
        live check needs. Without a passphrase it is always an answer. Never calls a model.
        ``session``: read steps 1-3 in the caller's session (a page showing the saved
        result reads everything in one) instead of a new one."""
        prepared, saved = self._steps_one_to_three(
            report_id, use_saved=not force_live, session=session
        )
        if isinstance(prepared, Conclude):
            return InvestigationResult(report_id, prepared.status, prepared.reason)
        if saved is not None:
            return saved
        refused = self._refuse_live(passphrase)
        if refused is not None:
            return self._with_latest_saved(
                replace(
                    refused,
                    report_id=report_id,
                    fingerprint=prepared.fingerprint,
                    evidence=prepared.cues,
                )
            )
        return prepared

    def _with_latest_saved(self, refused: InvestigationResult) -> InvestigationResult:
        """A refused check (no model asked) carries the report's most recent saved or
        replayed run, as ``saved_result`` shows it: saved and recorded results still display.
        The check's own status stays UNAVAILABLE or BUDGET_LIMIT."""
        with self.db.session() as session:
            run = store.latest_run_for_report(session, refused.report_id)
            if run is None:
                return refused
            return replace(refused, latest_saved=store.result_from_run(run))

    def _refuse_live(self, passphrase: str | None) -> InvestigationResult | None:
        """UNAVAILABLE before anything is sent or counted, or ``None`` to go ahead."""
        if not self.model.live_enabled:
            reason = "Live checks are switched off on this server (no passphrase is set)."
            refusal = Refusal.SWITCHED_OFF
        elif not self.model.passphrase_matches(passphrase):
            reason = "The passphrase was missing or did not match, so no model was asked."
            refusal = Refusal.PASSPHRASE
        else:
            try:
                self.model.provider_config().read_api_key()
            except NotConfigured as error:
                reason, refusal = reason_for_error(error), Refusal.NOT_CONFIGURED
            else:
                unhealthy = self.model_health() if self.model_health is not None else None
                if unhealthy is None:
                    return None
                reason, refusal = unhealthy, Refusal.MODEL_DOWN
        return InvestigationResult("", Status.UNAVAILABLE, reason, refusal=refusal)

    async def _live(self, prepared: Prepared, *, force_live: bool) -> InvestigationResult:
        calls = _CallLog()
        base = InvestigationResult(
            report_id=prepared.chosen.report_id,
            status=Status.FAILED,
            reason="",
            model=self.model.model,
            prompt_version=self.model.prompt_version,
            fingerprint=prepared.fingerprint,
            evidence=prepared.cues,
            rules_version=RULES_VERSION,
        )
        try:
            ledger = self.ledger_factory()
            provider = self._provider()
        except ModelGateError as error:
            return replace(base, status=status_for_error(error), reason=reason_for_error(error))
        try:
            gateway = Gateway(
                providers=[provider],
                ledger=ledger,
                recorder=self.recorder,
                retry=RetryPolicy(max_attempts=1),
            )
            with ledger.exclusive():
                saved = None if force_live else self._saved_run(prepared)
                if saved is not None:  # another check saved it while this one started
                    return saved
                result = await self._calls(prepared, gateway, calls, base)
                if result.status.saved:  # saved while the check still holds the ledger
                    result = self._save(prepared.incident_id, result)
                return result
        except ModelGateError as error:  # LedgerBusy from exclusive(), before any call
            return replace(
                base,
                status=status_for_error(error),
                reason=reason_for_error(error),
                usage=calls.totals(),
                requests_sent=calls.sent,
            )

    def _provider(self) -> Provider:
        """The provider for the current configuration and event loop, built once: an HTTP
        client (TLS context, connection pool) costs far more than a loopback call."""
        config = self.model.provider_config()
        key_value = config.read_api_key() or ""  # NotConfigured when a named key is unset
        key = (
            id(asyncio.get_running_loop()),
            fingerprint(config.model_dump(mode="json"), "trace_provider_config"),
            hashlib.sha256(key_value.encode()).hexdigest(),
        )
        provider = self._providers.get(key)
        if provider is None:
            stale = list(self._providers.values())
            self._providers.clear()
            self._stale.extend(stale)
            provider = self.provider_factory(config)
            self._providers[key] = provider
        return provider

    async def aclose(self) -> None:
        """Close the providers this service built (call it on the loop that used them)."""
        providers = [*self._providers.values(), *self._stale]
        self._providers.clear()
        self._stale.clear()
        for provider in providers:
            with contextlib.suppress(Exception):
                await provider.aclose()

    async def _calls(
        self,
        prepared: Prepared,
        gateway: Gateway,
        calls: _CallLog,
        base: InvestigationResult,
    ) -> InvestigationResult:
        output_type = attribution_result_type(prepared.menu.names)
        request = attribution_request(
            prepared.chosen, prepared.menu, output_type, self.model.prompt_version
        )
        try:
            labelled = await self._call(gateway, request, output_type, calls)
        except ModelGateError as error:
            return self._after_error(base, error, calls)
        labels = labelled.value
        named = source_name(labels)
        result = replace(
            base,
            mode=Mode.LIVE,
            attribution=labels.attribution.value,
            referenced_source=named,
            citations=(_citation("report", prepared.chosen),),
        )
        decision = apply_evidence_rule(
            decide_after_attribution(
                labels,
                {name: reports_from(name, prepared.reports) for name in prepared.menu.names},
            ),
            base.evidence,
        )
        if isinstance(decision, Conclude):
            return self._finish(result, decision, calls)
        referenced = decision.referenced
        problem = referenced.text_problem
        if problem is not None:
            return self._finish(
                result,
                Conclude(
                    Status.PARTIAL,
                    f"The report from {referenced.source} cannot be compared: {problem}",
                ),
                calls,
            )
        compare = support_request(prepared.chosen, referenced, self.model.prompt_version)
        try:
            compared = await self._call(gateway, compare, SupportResult, calls)
        except ModelGateError as error:
            return self._finish(
                result,
                Conclude(
                    Status.PARTIAL,
                    f"Trace retrieved the report from {referenced.source}, but the comparison "
                    f"did not succeed: {reason_for_error(error)}",
                ),
                calls,
            )
        result = replace(
            result,
            support=compared.value.support.value,
            citations=(_citation("report", prepared.chosen), _citation("referenced", referenced)),
        )
        return self._finish(result, decide_after_comparison(compared.value, referenced), calls)

    async def _call(
        self, gateway: Gateway, request: Any, output_type: Any, calls: _CallLog
    ) -> Answer[Any]:
        estimate = estimate_usage(request)
        try:
            answer: Answer[Any] = await gateway.attempt(request, output_type)
        except ModelGateError as error:
            if not _never_sent(error):
                calls.sending(estimate.total_tokens)
            raise
        calls.sending(estimate.total_tokens)
        calls.answers.append(answer.usage)
        return answer

    def _after_error(
        self, base: InvestigationResult, error: ModelGateError, calls: _CallLog
    ) -> InvestigationResult:
        return replace(
            base,
            status=status_for_error(error),
            mode=Mode.LIVE if calls.sent else None,
            reason=reason_for_error(error),
            usage=calls.totals(),
            requests_sent=calls.sent,
        )

    def _finish(
        self, result: InvestigationResult, decision: Conclude, calls: _CallLog
    ) -> InvestigationResult:
        return replace(
            result,
            status=decision.status,
            reason=decision.reason,
            lowered_by=decision.lowered_by,
            run_at=self.clock(),
            usage=calls.totals(),
            requests_sent=calls.sent,
        )

    def _save(self, incident_id: str, result: InvestigationResult) -> InvestigationResult:
        try:
            with self.db.session() as session:
                store.save_run(session, store.run_from_result(incident_id, result))
        except IntegrityError:
            return replace(
                result,
                reason=result.reason + " (Not saved: the report changed or was removed "
                "while the model was answering.)",
            )
        return replace(result, saved=True)


def _never_sent(error: ModelGateError) -> bool:
    return isinstance(error, NotSent)


def ledger_factory_for(settings: TraceSettings, db: Database | None = None) -> LedgerFactory:
    """The JSON-file ledger under TRACE_HOME, or the SQL ledger when DATABASE_URL is
    PostgreSQL, with the cap of ``settings.request_cap`` (TRACE_MODEL_REQUEST_CAP)."""
    if settings.database_url.startswith("postgresql"):
        engine = db.engine if db is not None else make_engine(settings.database_url)

        def sql_ledger() -> Ledger:
            from modelgate.ledger_sql import SqlLedger

            ledger: Ledger = SqlLedger(engine, name=SQL_LEDGER_NAME, cap=settings.request_cap)
            return ledger

        return sql_ledger

    def file_ledger() -> Ledger:
        return JsonFileLedger(settings.ledger_path, cap=settings.request_cap)

    return file_ledger


def build_service(
    db: Database,
    settings: TraceSettings,
    *,
    model: ModelSettings | None = None,
    provider_factory: ProviderFactory = build_provider,
    model_health: Callable[[], str | None] | None = None,
) -> InvestigationService:
    """The service as the web app and the CLI use it: ``model`` (default: read from the
    environment) names the model, the passphrase and the audit log; when
    ``model.audit_log`` is set, every model exchange is appended to it as JSONL through
    modelgate's recorder (request bodies with secrets removed).
    """
    model = model or ModelSettings.from_env()
    return InvestigationService(
        db,
        model=model,
        ledger_factory=ledger_factory_for(settings, db),
        provider_factory=provider_factory,
        recorder=Recorder(model.audit_log) if model.audit_log is not None else None,
        model_health=model_health,
    )


def _citation(role: str, report: ReportEvidence) -> Citation:
    return Citation(
        role=role,
        report_id=report.report_id,
        source=report.source,
        excerpt=report.text,
        reported_at=report.reported_at,
    )
