"""The whole error tree of modelgate, drawn where it is defined.

Callers classify outcomes by *type*, never by message text::

    ModelGateError
    ├── NotSent                      no request left this process; nothing counted
    │   ├── NotConfigured            no provider, key, client or optional library
    │   ├── LedgerUnavailable        ledger empty, unreadable, invalid (never rewritten)
    │   │   └── LedgerBusy           another reservation holds the lock: abstain
    │   ├── BudgetExhausted          the request cap is reached
    │   └── ReplayMiss               replay has no recorded exchange for this fingerprint
    └── CallFailed                   a request was reserved and sent; it stays counted
        ├── NoAnswer                 transient: nothing usable came back
        │   ├── AttemptTimeout       the caller-side wall clock ran out (late answer discarded)
        │   ├── TransportError       connection refused / reset / DNS ...
        │   └── ProviderStatusError  HTTP status from the provider (transient for 429 and 5xx)
        │       └── RateLimited      429, with an optional Retry-After in seconds
        ├── Rejected                 the provider refused the request (4xx other than 429)
        └── BadAnswer                an answer came back but is unusable: never retried
            ├── MalformedAnswer      not JSON, or the wrong shape for the output type
            └── OutOfSetAnswer       a value outside the closed set (enum, menu)

``AllProvidersFailed`` is raised by the gateway when every provider in the failover
order failed with a transient error, also when there is only one provider; it carries
each provider's error in ``errors`` (decision 0004).

``is_transient`` is the single place that says which failures a retry may repeat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ModelGateError(Exception):
    """Base of every modelgate error."""

    code: str = "modelgate_error"

    def __init__(self, message: str, *, provider: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider


# --- nothing was sent ---------------------------------------------------------------


class NotSent(ModelGateError):
    """No request left this process, and the ledger was not charged."""

    code = "not_sent"


class NotConfigured(NotSent):
    """No provider, key, client library or passphrase: live calls are off."""

    code = "not_configured"


class LedgerUnavailable(NotSent):
    """The ledger is empty, unreadable or invalid. It is left exactly as found."""

    code = "ledger_unavailable"


class LedgerBusy(LedgerUnavailable):
    """Another reservation holds the ledger lock; this one abstains instead of queueing."""

    code = "ledger_busy"


class BudgetExhausted(NotSent):
    """The lifetime request cap is reached."""

    code = "budget_exhausted"

    def __init__(self, message: str, *, cap: int, requests: int) -> None:
        super().__init__(message)
        self.cap = cap
        self.requests = requests


class ReplayMiss(NotSent):
    """Replay mode found no recorded exchange for the request fingerprint."""

    code = "replay_miss"

    def __init__(self, message: str, *, fingerprint: str) -> None:
        super().__init__(message)
        self.fingerprint = fingerprint


# --- a request was sent and counted --------------------------------------------------


class CallFailed(ModelGateError):
    """A request was reserved in the ledger and sent; it stays counted.

    ``request_body`` is the body as sent (secrets removed) when the provider knows it,
    so that the recorder can keep failed exchanges as faithfully as answered ones.
    """

    code = "call_failed"
    request_body: dict[str, Any] | None = None


class NoAnswer(CallFailed):
    """Transient: nothing usable came back. A retry policy may repeat it.

    ``retry_after_s`` is the provider's Retry-After in seconds, when it gave one."""

    code = "no_answer"
    retry_after_s: float | None = None


class AttemptTimeout(NoAnswer):
    """The caller-side wall-clock limit of one attempt ran out; a late answer is discarded."""

    code = "attempt_timeout"

    def __init__(self, message: str, *, limit_s: float, provider: str | None = None) -> None:
        super().__init__(message, provider=provider)
        self.limit_s = limit_s


class TransportError(NoAnswer):
    """The connection failed (refused, reset, closed early)."""

    code = "transport_error"


class ProviderStatusError(NoAnswer):
    """The provider answered with an HTTP error status (429 or 5xx: transient)."""

    code = "provider_status"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after_s: float | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message, provider=provider)
        self.status = status
        self.retry_after_s = retry_after_s


class RateLimited(ProviderStatusError):
    """HTTP 429, with the provider's Retry-After when it gave one."""

    code = "rate_limited"


class Rejected(CallFailed):
    """The provider refused the request (4xx other than 429): retrying cannot help."""

    code = "rejected"

    def __init__(self, message: str, *, status: int, provider: str | None = None) -> None:
        super().__init__(message, provider=provider)
        self.status = status


class BadAnswer(CallFailed):
    """An answer came back but is unusable. Never retried, never coerced."""

    code = "bad_answer"

    def __init__(self, message: str, *, raw_text: str = "", provider: str | None = None) -> None:
        super().__init__(message, provider=provider)
        self.raw_text = raw_text


class MalformedAnswer(BadAnswer):
    """Not JSON, or JSON of the wrong shape for the requested output type."""

    code = "malformed_answer"


class OutOfSetAnswer(BadAnswer):
    """A value outside the closed set the request allowed (an enum or a menu)."""

    code = "out_of_set_answer"


class AllProvidersFailed(NoAnswer):
    """Every provider in the failover order failed transiently in one attempt."""

    code = "all_providers_failed"

    def __init__(self, message: str, *, errors: Sequence[CallFailed]) -> None:
        super().__init__(message)
        self.errors = tuple(errors)
        hints = [
            e.retry_after_s
            for e in self.errors
            if isinstance(e, NoAnswer) and e.retry_after_s is not None
        ]
        self.retry_after_s = max(hints) if hints else None  # the largest Retry-After


def is_transient(error: BaseException) -> bool:
    """True for the failures a retry may repeat: timeouts, transport errors, 429 and 5xx."""
    if isinstance(error, AllProvidersFailed):
        return all(is_transient(e) for e in error.errors)
    if isinstance(error, ProviderStatusError):
        return error.status == 429 or error.status >= 500
    return isinstance(error, NoAnswer)
