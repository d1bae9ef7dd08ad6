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

The request ledger writes through it too; its settlements pass ``sync_folder=False``
(atomic at once, the new name durable with the file system's next commit).
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
def atomic_write(path: Path, *, sync_folder: bool = True) -> Iterator[BinaryIO]:
    """Write ``path`` through a temporary sibling; publish it only if the block succeeds.

    The order is always the portable one: the temporary file is fsynced before the
    rename (no name ever points at data not on disk), then the folder is fsynced (the
    new name is on disk). ``sync_folder=False`` skips that last step: the replacement
    is still atomic, but a power cut (not a crash) may bring the old file back."""
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
    if sync_folder:
        fsync_folder(path.parent)


def write_bytes_atomic(path: Path, data: bytes, *, sync_folder: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically and (unless ``sync_folder=False``, see
    ``atomic_write``) durably."""
    with atomic_write(path, sync_folder=sync_folder) as handle:
        handle.write(data)
