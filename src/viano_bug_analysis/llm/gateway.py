"""LLMGateway: Viano's view of modelgate. One dispatch = one attempt = one outcome.

The gateway sends one attempt (every configured provider in failover order, through
modelgate's ``Gateway.attempt``: ledger, caller-side wall clock, answer validation,
recording) and classifies what happened into exactly one of five outcomes. It never
sleeps and never loops: a due retry is scheduled by the caller. docs/llm-gateway-v1.md
defines the outcomes; in short:

    COMPLETED      an answer came back and matches the output schema
    RETRY_PENDING  every provider failed transiently; attempts remain; ``due_at`` says when
    DEFERRED       nothing was sent (no key, ledger busy/unreadable, cap reached); no
                   attempt was used; try again once the condition is gone
    BLOCKED        a transient failure used the last attempt; this attempt_id is finished
    ERROR          the provider refused the request, the answer is unusable or too large,
                   or the request is larger than allowed; never retried under the same id
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from modelgate.errors import (
    BadAnswer,
    CallFailed,
    ModelGateError,
    NotSent,
    ReplayMiss,
    is_transient,
)
from modelgate.gateway import Gateway, RetryPolicy
from modelgate.ledger import CAP_MAX, JsonFileLedger, Ledger
from modelgate.providers import Provider, build_provider
from modelgate.recording import Recorder
from modelgate.types import ModelRequest, StructuredOutput
from viano_bug_analysis.llm.config import GatewayConfig

Clock = Callable[[], datetime]


class OutcomeStatus(enum.StrEnum):
    COMPLETED = "COMPLETED"
    RETRY_PENDING = "RETRY_PENDING"
    DEFERRED = "DEFERRED"
    BLOCKED = "BLOCKED"
    ERROR = "ERROR"


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class GatewayOutcome:
    """What one dispatch produced. ``sent`` says whether any upstream request left.

    ``output`` is the schema-valid answer (COMPLETED only); ``raw_text`` is the answer
    text as received whenever one came back (also for an unusable answer).
    """

    status: OutcomeStatus
    attempt_number: int
    sent: bool
    started_at: str
    finished_at: str
    output: dict[str, Any] | None = None
    raw_text: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    latency_s: float | None = None
    due_at: str | None = None
    error: dict[str, Any] | None = None
    provider_errors: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "attempt_number": self.attempt_number,
            "sent": self.sent,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "output": self.output,
            "raw_text": self.raw_text,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage,
            "latency_s": self.latency_s,
            "due_at": self.due_at,
            "error": self.error,
            "provider_errors": self.provider_errors,
        }


def _error_json(error: BaseException) -> dict[str, Any]:
    code = error.code if isinstance(error, ModelGateError) else "internal_error"
    out: dict[str, Any] = {"type": type(error).__name__, "code": code, "message": str(error)[:2000]}
    provider = getattr(error, "provider", None)
    if provider:
        out["provider"] = provider
    status = getattr(error, "status", None)
    if isinstance(status, int):
        out["http_status"] = status
    return out


class LLMGateway:
    """Dispatches interpretation requests per a :class:`GatewayConfig`.

    ``providers`` replaces the configured adapters (tests pass modelgate's
    ``ScriptedProvider`` here; it takes the same gateway path as a real adapter).
    ``ledger`` overrides ``limits.ledger_path``; ``recorder`` appends every exchange
    to a JSONL audit log; ``clock`` gives "now" for due times. ``endpoints``, called when the
    providers are first built, gives provider name -> base URL overrides for this run
    (the embedded model started on a port of its own, ``llm.local_model``); the
    configuration and its fingerprint keep the configured URL.
    """

    def __init__(
        self,
        config: GatewayConfig,
        *,
        providers: Sequence[Provider] | None = None,
        ledger: Ledger | None = None,
        recorder: Recorder | None = None,
        clock: Clock = utc_now,
        endpoints: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.config = config
        self._endpoints = endpoints
        self._providers = tuple(providers) if providers is not None else None
        self._ledger = ledger
        self._recorder = recorder
        self.clock = clock
        self._gateway: Gateway | None = None

    def configuration_fingerprint(self) -> str:
        """The configuration's fingerprint (``GatewayConfig.fingerprint``)."""
        return self.config.fingerprint()

    @property
    def max_output_tokens(self) -> int:
        values = [p.max_output_tokens for p in self.config.providers if p.max_output_tokens]
        return min(values) if values else 4096

    @property
    def answer_tokens(self) -> int:
        """The answer size the request schema is bounded to: the smallest
        ``answer_tokens`` (else ``max_output_tokens``) among the providers, since any may
        answer in failover; never above :attr:`max_output_tokens` (ADR 0105)."""
        values = [
            getattr(p, "answer_tokens", None) or p.max_output_tokens for p in self.config.providers
        ]
        known = [v for v in values if v]
        return min([*known, self.max_output_tokens])

    @property
    def grammar_keeps_ids_distinct(self) -> bool:
        """Whether every provider may be sent lists that need distinct ids: False when one
        constrains its answer with llama.cpp's grammar (``json_object_schema``), which
        ignores ``uniqueItems``, so a small model can cite one id twice in a
        contradiction. The request schema then leaves contradictions out (ADR 0103): a
        stated capability of that provider, not a rule of the validator."""
        return all(
            getattr(p, "structured_output", None) != StructuredOutput.JSON_OBJECT_SCHEMA
            for p in self.config.providers
        )

    @property
    def context_window_tokens(self) -> int | None:
        """The smallest context window configured for a provider (any may answer in
        failover), or None when none names one."""
        values = [
            window
            for p in self.config.providers
            if (window := getattr(p, "context_window_tokens", None)) is not None
        ]
        return min(values) if values else None

    def _build(self) -> Gateway:
        """Providers are built on first use so that a missing key is a DEFERRED outcome
        of a dispatch rather than a failure of construction."""
        if self._gateway is None:
            urls = self._endpoints() if self._endpoints is not None else {}
            providers = self._providers or tuple(
                build_provider(
                    p.model_copy(update={"base_url": urls[p.name]}) if p.name in urls else p
                )
                for p in self.config.providers
            )
            ledger = self._ledger
            if ledger is None and self.config.limits.ledger_path:
                cap = self.config.limits.request_cap or CAP_MAX
                ledger = JsonFileLedger(Path(self.config.limits.ledger_path), cap=cap)
            self._gateway = Gateway(
                providers, ledger=ledger, recorder=self._recorder, retry=RetryPolicy(1)
            )
        return self._gateway

    def due_after(self, attempt_number: int, error: BaseException) -> datetime:
        """When the next attempt may go: the configured backoff for this attempt, or the
        provider's Retry-After when that is longer (and honoured)."""
        delay = self.config.retry.delay_after(attempt_number)
        hint = getattr(error, "retry_after_s", None)
        if self.config.retry.honour_retry_after and isinstance(hint, int | float):
            delay = max(delay, float(hint))
        return self.clock() + timedelta(seconds=delay)

    async def dispatch(
        self, request: ModelRequest, output_type: type[BaseModel], *, attempt_number: int
    ) -> GatewayOutcome:
        """One attempt (failover across providers) and its classified outcome.

        ``output_type`` is the typed answer (its JSON schema is what the provider is asked
        for and what the answer is validated against). ``attempt_number`` is 1-based and
        counts attempts of one attempt_id.
        ``asyncio.CancelledError`` propagates unchanged (the request, if sent, stays
        counted in the ledger).
        """
        started = iso(self.clock())
        size = sum(len(m.content.encode("utf-8")) for m in request.messages)
        if size > self.config.limits.max_request_bytes:
            error = {
                "type": "RequestTooLarge",
                "code": "request_too_large",
                "message": f"request is {size} bytes; the limit is "
                f"{self.config.limits.max_request_bytes}",
            }
            return GatewayOutcome(
                OutcomeStatus.ERROR, attempt_number, False, started, iso(self.clock()), error=error
            )
        clock_start = time.perf_counter()
        try:
            gateway = self._build()
            answer = await gateway.attempt(request, output_type, attempt_number=attempt_number)
        except ReplayMiss as exc:
            return self._failed(OutcomeStatus.ERROR, attempt_number, False, started, exc)
        except NotSent as exc:
            self._gateway = None  # rebuild next time (a key may have been set meanwhile)
            return self._failed(OutcomeStatus.DEFERRED, 0, False, started, exc)
        except BadAnswer as exc:
            return self._failed(
                OutcomeStatus.ERROR, attempt_number, True, started, exc, raw_text=exc.raw_text
            )
        except CallFailed as exc:
            if not is_transient(exc):
                return self._failed(OutcomeStatus.ERROR, attempt_number, True, started, exc)
            if attempt_number >= self.config.retry.max_attempts:
                return self._failed(OutcomeStatus.BLOCKED, attempt_number, True, started, exc)
            due = iso(self.due_after(attempt_number, exc))
            return self._failed(
                OutcomeStatus.RETRY_PENDING, attempt_number, True, started, exc, due_at=due
            )
        latency = round(time.perf_counter() - clock_start, 6)
        usage = {
            "prompt_tokens": answer.usage.prompt_tokens,
            "completion_tokens": answer.usage.completion_tokens,
            "source": answer.usage.source,
        }
        common: dict[str, Any] = {
            "raw_text": answer.raw_text,
            "provider": answer.provider,
            "model": answer.model,
            "usage": usage,
            "latency_s": latency,
        }
        if len(answer.raw_text.encode("utf-8")) > self.config.limits.max_answer_bytes:
            error = {
                "type": "AnswerTooLarge",
                "code": "answer_too_large",
                "message": f"answer exceeds {self.config.limits.max_answer_bytes} bytes",
            }
            return GatewayOutcome(
                OutcomeStatus.ERROR,
                attempt_number,
                True,
                started,
                iso(self.clock()),
                error=error,
                **common,
            )
        return GatewayOutcome(
            OutcomeStatus.COMPLETED,
            attempt_number,
            True,
            started,
            iso(self.clock()),
            output=json.loads(answer.raw_text),
            **common,
        )

    def _failed(
        self,
        status: OutcomeStatus,
        attempt_number: int,
        sent: bool,
        started: str,
        error: ModelGateError,
        *,
        raw_text: str | None = None,
        due_at: str | None = None,
    ) -> GatewayOutcome:
        nested = [_error_json(e) for e in getattr(error, "errors", ())]
        return GatewayOutcome(
            status,
            attempt_number,
            sent,
            started,
            iso(self.clock()),
            raw_text=raw_text or None,
            provider=error.provider,
            due_at=due_at,
            error=_error_json(error),
            provider_errors=nested,
        )

    async def aclose(self) -> None:
        if self._gateway is not None:
            await self._gateway.aclose()
