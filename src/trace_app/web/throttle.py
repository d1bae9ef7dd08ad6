"""Throttling wrong live-check passphrases, per client address and overall (``limits``),
and publishing, per account or token (:class:`PublishLimiter`).

Only a passphrase that was typed and did not match counts. Once an address has used up
its allowance (default 5 a minute), or every address together the overall ceiling
(default 30 a minute), any typed passphrase is refused with 429, a ``Retry-After`` and
a plain message, before the investigation runs: no model is asked and the ledger does
not change. A check without a passphrase (showing a saved run) is never throttled.

Where the counts live (docs/decisions/0054-passphrase-throttle-storage.md): in the
``limits`` storage named by ``TRACE_RATE_LIMIT_STORAGE``, ``memory://`` by default, so
in each process. Replicas sharing one PostgreSQL database do not share these counts
(``limits`` has no SQL storage): with R replicas an address gets at most R times its
allowance, and the ceiling is R times the overall one. Point every replica at one
``redis://`` (or ``memcached://``, ``mongodb://``) storage for limits that hold across
them; that needs the storage's client package.

Client address: the connection's peer as uvicorn reports it. Behind a proxy, run
uvicorn with ``--proxy-headers --forwarded-allow-ips`` naming that proxy, or every
client shares the proxy's address (and its allowance).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, parse
from limits.storage import Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

NAMESPACE = "trace-wrong-passphrase"
OVERALL_KEY = "*"
DEFAULT_PER_ADDRESS = "5/minute"
DEFAULT_OVERALL = "30/minute"
DEFAULT_STORAGE = "memory://"


@dataclass(frozen=True, slots=True)
class Refusal:
    retry_after_s: int
    message: str


class PassphraseThrottle:
    def __init__(
        self,
        per_address: str = DEFAULT_PER_ADDRESS,
        overall: str = DEFAULT_OVERALL,
        storage: str | Storage = DEFAULT_STORAGE,
    ) -> None:
        self.per_address: RateLimitItem = parse(per_address)
        self.overall: RateLimitItem = parse(overall)
        self.storage = storage_from_string(storage) if isinstance(storage, str) else storage
        self.limiter = MovingWindowRateLimiter(self.storage)

    def refusal(self, address: str) -> Refusal | None:
        """A refusal when this address, or everybody together, has no guesses left."""
        checks = (
            (self.per_address, address, "from this address"),
            (self.overall, OVERALL_KEY, "on this server"),
        )
        for item, key, where in checks:
            if not self.limiter.test(item, NAMESPACE, key):
                stats = self.limiter.get_window_stats(item, NAMESPACE, key)
                wait = max(1, math.ceil(stats.reset_time - time.time()))
                return Refusal(
                    wait,
                    f"Too many wrong passphrases {where}. Nothing was checked and no model "
                    f"was asked. Try again in {wait} seconds.",
                )
        return None

    def wrong(self, address: str) -> None:
        """Count one wrong passphrase for the address and for the overall ceiling."""
        self.limiter.hit(self.per_address, NAMESPACE, address)
        self.limiter.hit(self.overall, NAMESPACE, OVERALL_KEY)


class PublishLimiter:
    """Reports published per account or API token (``TRACE_PUBLISH_LIMIT``, default 120 a
    minute): a stranger's script, or a stolen token, cannot flood an incident. Counted
    before the report is checked; the refusal is a 429 with ``Retry-After``."""

    def __init__(self, settings: Any) -> None:
        self.item: RateLimitItem = parse(settings.publish_limit)
        self.limiter = MovingWindowRateLimiter(storage_from_string(settings.rate_limit_storage))

    def refusal(self, key: str) -> Refusal | None:
        if self.limiter.hit(self.item, "trace-publish", key):
            return None
        stats = self.limiter.get_window_stats(self.item, "trace-publish", key)
        wait = max(1, math.ceil(stats.reset_time - time.time()))
        return Refusal(
            wait,
            f"Too many reports from this account ({self.item}). Nothing was published. "
            f"Try again in {wait} seconds.",
        )
