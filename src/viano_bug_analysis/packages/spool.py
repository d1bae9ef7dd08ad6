"""``Spool``: the output file of a package generation, assembled in memory when small.

See docs/decisions/0026-small-package-io-in-memory.md.
"""

from __future__ import annotations

import hashlib
import io
from typing import BinaryIO

# A generation up to this size is assembled in memory, then written in one call
SPOOL_BYTES = 1 << 20


class Spool:
    """The output file for zipfile, kept in memory up to ``limit`` bytes.

    zipfile writes a package in many small writes, tells and seeks (it goes back to
    finish each member's header); on a file each is a system call that gives up the GIL
    and waits to take it back while other threads run. A generation of an interpreted
    case is a few kilobytes, so it is assembled in memory and written with one call;
    past ``limit`` the bytes so far move to the file, which takes every later call."""

    def __init__(self, file: BinaryIO, limit: int = SPOOL_BYTES) -> None:
        self._file = file
        self._memory: io.BytesIO | None = io.BytesIO()
        self._limit = limit

    def _spill(self) -> None:
        memory, self._memory = self._memory, None
        assert memory is not None
        position = memory.tell()
        self._file.write(memory.getbuffer())
        self._file.seek(position)

    def write(self, data: bytes) -> int:
        memory = self._memory
        if memory is None:
            return self._file.write(data)
        if memory.tell() + len(data) > self._limit:
            self._spill()
            return self._file.write(data)
        return memory.write(data)

    def tell(self) -> int:
        return self._file.tell() if self._memory is None else self._memory.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        target = self._file if self._memory is None else self._memory
        return target.seek(offset, whence)

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        if self._memory is None:
            self._file.flush()

    def finish(self) -> tuple[str, int] | None:
        """Write what is still in memory to the file (once, at the end); then the SHA-256
        and size of those bytes, or ``None`` when they went to the file earlier."""
        memory, self._memory = self._memory, None
        if memory is None:
            return None
        view = memory.getbuffer()
        try:
            self._file.write(view)
            return hashlib.sha256(view).hexdigest(), len(view)
        finally:
            view.release()
