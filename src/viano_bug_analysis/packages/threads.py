"""A small process-wide thread pool for work that releases the GIL (zlib, hashlib).

Deflating a large member and hashing a large input run there while the calling thread
goes on with Python work. A forked child forgets the pool (it has none of the parent's
threads) and starts its own when it needs one.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None


def background_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        workers = max(1, min(4, os.cpu_count() or 1))
        _pool = ThreadPoolExecutor(workers, thread_name_prefix="viano-background")
    return _pool


def _forget_pool() -> None:
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)
