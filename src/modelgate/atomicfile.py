"""Atomic file replacement, the one implementation the apps share.

``atomic_write(path)`` yields a binary file in the same folder as ``path``; when the
block ends without an exception the file is flushed, fsynced and renamed over ``path``
with ``os.replace``, and the folder is fsynced so the new name survives a power cut.
If the block raises, the temporary file is removed and ``path`` is left as it was.

What it guarantees: a reader sees the whole old file or the whole new one, never a
torn mix, and after the call returns the new content is on disk. What it does not: it
does not serialise concurrent writers (the last rename wins; callers that need one
writer take a lock), and on file systems without atomic rename (some network mounts)
the guarantee is only as good as the file system's.

The request ledger keeps its own write path (``modelgate.ledger``) because it chooses
its fsync order per file system to stay under a millisecond where that is safe.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def fsync_folder(folder: Path) -> None:
    """Make a rename inside ``folder`` durable; an error (the rename may not last) raises."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: Path) -> Iterator[BinaryIO]:
    """Write ``path`` through a temporary sibling; publish it only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(6)}")
    try:
        with open(temp, "xb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    fsync_folder(path.parent)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably."""
    with atomic_write(path) as handle:
        handle.write(data)
