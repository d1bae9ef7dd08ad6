"""Per-(case, package) operation locks.

Why ``fcntl.flock`` on a lock file: the kernel drops the lock when the holding process
exits for any reason (crash, SIGKILL, power loss of the process), so a lock left by a
crashed process is released by the operating system and never needs a stale-lock
heuristic. The lock is taken non-blocking: a second concurrent operation gets
``LockBusy`` at once instead of queueing. ``flock`` locks belong to an open file
description, so two acquisitions in one process (threads, re-entrant calls) also exclude
each other. The file's text (pid, host) is diagnostic only; nothing reads it for logic.
Limitation: flock over some network filesystems is not reliable; keep stores local.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from pathlib import Path
from types import TracebackType

from viano_bug_analysis.errors import LockBusy, StoreError

_HOLDER: tuple[int, bytes] | None = None


def _holder_text() -> bytes:
    """``pid=... host=...`` of this process (computed once per process)."""
    global _HOLDER
    pid = os.getpid()
    if _HOLDER is None or _HOLDER[0] != pid:
        _HOLDER = (pid, f"pid={pid} host={socket.gethostname()}\n".encode())
    return _HOLDER[1]


class OperationLock:
    """An exclusive, non-blocking lock on one lock file; a context manager."""

    def __init__(self, path: Path, description: str) -> None:
        self.path = path
        self.description = description
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> OperationLock:
        if self._fd is not None:
            raise LockBusy(f"{self.description} is already locked by this handle")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # O_NOFOLLOW: a link planted in place of the lock file is refused, never
            # followed (and its target never truncated)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StoreError(
                    f"lock file {self.path} is a symbolic link; a store never follows one",
                    code="store.symlink",
                ) from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise LockBusy(
                    f"another operation is running on {self.description}",
                    lock_file=str(self.path),
                ) from None
            raise
        try:
            os.ftruncate(fd, 0)
            os.write(fd, _holder_text())
        except OSError:
            pass  # diagnostic text only
        self._fd = fd
        return self

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> OperationLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
