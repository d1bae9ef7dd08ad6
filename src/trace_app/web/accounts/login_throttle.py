"""Failed sign-ins (and wrong current passwords) per account name and per client address."""

from __future__ import annotations

import math
import time

from limits import parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from trace_app.settings import TraceSettings


class LoginThrottle:
    """Failed sign-ins per account name and per client address (``limits``, moving window)."""

    def __init__(self, settings: TraceSettings) -> None:
        self.per_account = parse(settings.login_limit)
        self.per_address = parse(settings.login_limit_address)
        self.limiter = MovingWindowRateLimiter(storage_from_string(settings.rate_limit_storage))

    def wait_s(self, name: str, address: str) -> int | None:
        for item, key in ((self.per_account, "a:" + name), (self.per_address, "c:" + address)):
            if not self.limiter.test(item, "trace-login", key):
                stats = self.limiter.get_window_stats(item, "trace-login", key)
                return max(1, math.ceil(stats.reset_time - time.time()))
        return None

    def failed(self, name: str, address: str) -> None:
        self.limiter.hit(self.per_account, "trace-login", "a:" + name)
        self.limiter.hit(self.per_address, "trace-login", "c:" + address)
