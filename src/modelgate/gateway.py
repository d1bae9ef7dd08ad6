"""The gateway: the one place that owns the wall clock, retries, failover, ledger and
recording. Providers only send one request and classify its failure.

Two clocks, named:

- **attempt clock** (``provider.timeout_s``): the wall clock of one upstream request,
  enforced on the caller's side with ``asyncio.timeout``. When it runs out the request
  is cancelled, any late answer is discarded, and the request stays counted.
- **call budget** (``RetryPolicy.max_attempts`` and its delays): how many attempts
  ``Gateway.call`` makes, sleeping inline between them. ``Gateway.attempt`` makes one
  attempt and leaves scheduling to the caller (Viano's RETRY_PENDING with a due time).

For every upstream request, in this order: ledger ``reserve`` (before anything is
sent), ``provider.complete`` under the attempt clock, ledger ``settle`` (provider
usage, else the estimate), answer validation, ``Recorder.append``. A transient failure
falls over to the next provider; ``BadAnswer`` and ``Rejected`` never fall over and are
never retried; a ``NotSent`` refusal (cap, busy or unreadable ledger, replay miss)
stops the attempt at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from modelgate.answers import parse_answer
from modelgate.errors import (
    AllProvidersFailed,
    AttemptTimeout,
    BadAnswer,
    CallFailed,
    ModelGateError,
    NotSent,
    is_transient,
)
from modelgate.fingerprint import request_fingerprint, request_material
from modelgate.ledger import Ledger, Reservation
from modelgate.providers.base import Provider
from modelgate.recording import Exchange, Recorder, utc_iso
from modelgate.types import Answer, ModelRequest, OutputT, ProviderResponse, Usage, estimate_usage

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Which failures are repeated, how often, and after how long.

    ``max_attempts`` counts attempts, not retries (1 = no retry). The delay before
    attempt ``n + 1`` is ``backoff_s * 2 ** (n - 1)`` capped at ``max_backoff_s``; with
    ``honour_retry_after`` a provider's Retry-After (capped at ``max_retry_after_s``)
    lengthens it. Only transient errors (``errors.is_transient``) are ever repeated.
    """

    max_attempts: int = 1
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    honour_retry_after: bool = True
    max_retry_after_s: float = 600.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.backoff_s < 0 or self.max_backoff_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("delays must not be negative")

    def delay_before(self, attempt_number: int, error: BaseException) -> float | None:
        """Seconds to wait before the next attempt, ``attempt_number`` being how many
        attempts were made so far (the failed one included). ``None``: do not retry
        (the error is not transient, or the attempts are exhausted)."""
        if not is_transient(error) or attempt_number >= self.max_attempts:
            return None
        delay: float = min(self.backoff_s * 2.0 ** max(0, attempt_number - 1), self.max_backoff_s)
        if self.honour_retry_after:
            hint = getattr(error, "retry_after_s", None)
            if isinstance(hint, int | float):
                delay = max(delay, min(float(hint), self.max_retry_after_s))
        return delay

    def due_at(
        self, attempt_number: int, error: BaseException, *, now: datetime | None = None
    ) -> datetime | None:
        """When the next attempt is due (UTC), or ``None`` like ``delay_before``."""
        delay = self.delay_before(attempt_number, error)
        if delay is None:
            return None
        return (now or datetime.now(UTC)) + timedelta(seconds=delay)


Sleep = Callable[[float], Awaitable[None]]


class Gateway:
    """The guarded path to one or more providers (tried in order)."""

    def __init__(
        self,
        providers: Sequence[Provider],
        ledger: Ledger | None = None,
        recorder: Recorder | None = None,
        retry: RetryPolicy | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if not providers:
            raise ValueError("a gateway needs at least one provider")
        self.providers = tuple(providers)
        self.ledger = ledger
        self.recorder = recorder
        self.retry = retry or RetryPolicy()
        self._sleep = sleep

    async def call(self, request: ModelRequest, output_type: type[OutputT]) -> Answer[OutputT]:
        """Attempts per ``self.retry``, sleeping inline between them; the last error is
        raised when the policy gives up."""
        attempt_number = 1
        while True:
            try:
                return await self.attempt(request, output_type, attempt_number=attempt_number)
            except CallFailed as error:
                delay = self.retry.delay_before(attempt_number, error)
                if delay is None:
                    raise
                log.info(
                    "attempt %d failed (%s); retrying in %.2f s", attempt_number, error.code, delay
                )
                await self._sleep(delay)
                attempt_number += 1

    async def attempt(
        self, request: ModelRequest, output_type: type[OutputT], *, attempt_number: int = 1
    ) -> Answer[OutputT]:
        """One attempt: each provider in order until one answers or one fails for good.

        Raises ``NotSent`` refusals as they come, ``BadAnswer``/``Rejected`` from the
        provider that produced them, and ``AllProvidersFailed`` (with every provider's
        error) when all failed transiently.
        """
        errors: list[CallFailed] = []
        for provider in self.providers:
            try:
                return await self._exchange(provider, request, output_type, attempt_number)
            except CallFailed as error:
                if not is_transient(error):
                    raise
                errors.append(error)
                log.info("provider %s failed transiently (%s)", provider.name, error.code)
        names = ", ".join(f"{e.provider}: {e.code}" for e in errors)
        raise AllProvidersFailed(f"every provider failed ({names})", errors=errors)

    async def _exchange(
        self,
        provider: Provider,
        request: ModelRequest,
        output_type: type[OutputT],
        attempt_number: int,
    ) -> Answer[OutputT]:
        fp = request_fingerprint(request, provider.model)
        estimate: Usage | None = None  # made when it is needed: a ledger or no usage
        upstream = provider.sends_upstream
        reservation: Reservation | None = None
        if upstream and self.ledger is not None:
            estimate = estimate_usage(request)
            # in a worker thread (fsync can take milliseconds); the context, and so an
            # ``exclusive()`` hold, goes with it. Cancelled meanwhile: counted, not sent.
            # No ledger, no thread hop.
            reservation = await asyncio.to_thread(
                self.ledger.reserve, estimated_tokens=estimate.total_tokens
            )
        started_wall = time.time()  # formatted only when an exchange is recorded
        started = time.perf_counter()
        response: ProviderResponse | None = None
        try:
            # the attempt clock, inline (one coroutine frame less on every resume)
            try:
                async with asyncio.timeout(provider.timeout_s) as clock:
                    response = await provider.complete(request)
            except TimeoutError:
                if not clock.expired():
                    raise
                raise AttemptTimeout(
                    f"{provider.name}: no answer within {provider.timeout_s} s; "
                    "a late answer is discarded",
                    limit_s=provider.timeout_s,
                    provider=provider.name,
                ) from None
        except BaseException as error:
            latency = time.perf_counter() - started
            estimate = estimate or estimate_usage(request)
            await self._settle(reservation, estimate)
            self._record(
                provider, request, fp, error, None, estimate, started_wall, latency, attempt_number
            )
            raise
        latency = time.perf_counter() - started
        usage = response.usage or estimate or estimate_usage(request)
        await self._settle(reservation, usage)
        try:
            value = parse_answer(response.text, output_type, provider=provider.name)
        except BadAnswer as error:
            error.request_body = response.request_body
            self._record(
                provider, request, fp, error, response, usage, started_wall, latency, attempt_number
            )
            raise
        self._record(
            provider, request, fp, None, response, usage, started_wall, latency, attempt_number
        )
        return Answer(
            value=value,
            model=response.model,
            provider=provider.name,
            usage=usage,
            request_fingerprint=fp,
            latency_s=latency,
            raw_text=response.text,
            replayed=not upstream,
        )

    async def _settle(self, reservation: Reservation | None, usage: Usage) -> None:
        if reservation is None or self.ledger is None:
            return
        if usage.source != "provider":
            self.ledger.settle(reservation, usage)  # counts stay as reserved; no write
            return
        try:
            await asyncio.to_thread(self.ledger.settle, reservation, usage)
        except ModelGateError as error:
            # the request stays counted; only provider token counts could be lost
            log.warning("ledger settlement failed (%s); request remains counted", error.code)

    def _record(
        self,
        provider: Provider,
        request: ModelRequest,
        fp: str,
        error: BaseException | None,
        response: ProviderResponse | None,
        usage: Usage,
        started_wall: float,
        latency: float,
        attempt_number: int,
    ) -> None:
        if self.recorder is None or not provider.sends_upstream:
            return  # a replayed answer is not an upstream exchange
        if isinstance(error, NotSent):
            return  # nothing left this process: not an exchange
        if error is None:
            outcome = "ok"
        elif isinstance(error, ModelGateError):
            outcome = error.code
        elif isinstance(error, asyncio.CancelledError):
            outcome = "cancelled"
        else:
            outcome = "internal_error"
        if response is not None:
            body = response.request_body
        elif isinstance(error, CallFailed) and error.request_body is not None:
            body = error.request_body
        else:
            body = _body_of(provider, request)
        exchange = Exchange(
            request_fingerprint=fp,
            provider=provider.name,
            model=provider.model,
            prompt_version=request.prompt_version,
            output_name=request.output_name,
            outcome=outcome,
            request=body,
            response_text=response.text if response is not None else None,
            response=response.raw if response is not None else None,
            usage=dataclasses.asdict(usage),
            error=None if error is None else f"{type(error).__name__}: {error}",
            started_at=utc_iso(started_wall),
            latency_s=round(latency, 6),
            attempt=attempt_number,
        )
        try:
            self.recorder.append(exchange)
        except OSError as exc:
            log.error("could not append to the audit log %s: %s", self.recorder.path, exc)
            raise

    async def aclose(self) -> None:
        """Close every provider (each releases what it holds)."""
        for provider in self.providers:
            await provider.aclose()


def _body_of(provider: Provider, request: ModelRequest) -> dict[str, Any]:
    """The body the provider sends for ``request``, for an exchange that ended before
    the provider said; the request material if even that fails (recording must never
    mask the real outcome)."""
    try:
        return provider.request_body(request)
    except Exception:
        return request_material(request, provider.model)


__all__ = ["Gateway", "RetryPolicy"]
