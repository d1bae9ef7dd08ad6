"""Safe, streaming reading of a package ZIP.

``PackageReader`` validates every entry of the central directory before anything is
read (names, links, duplicates, encryption, declared sizes and ratios) and then counts
bytes while streaming a member, so a member that lies about its size stops at the limit.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any, BinaryIO

from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.packages.format import (
    MANIFEST_NAME,
    ORIGINAL_PREFIX,
    Manifest,
    PackageLimits,
)

CHUNK = 1 << 20
# Everything zipfile and its decompressors raise on damaged input.
READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    OSError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    zlib.error,
    struct.error,
)


_CONTROL_CHARACTER = re.compile("[\x00-\x1f]")

LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zipfile.structFileHeader
LOCAL_MAGIC = b"PK\x03\x04"
# Whole deflated members from this size are inflated by ISA-L when python-isal is
# installed (about twice as fast as zlib, its CRC-32 ten times); smaller ones and every
# stream go through zipfile.
FAST_INFLATE_BYTES = 256 * 1024
_FAST_ZLIB: Any = None


def fast_zlib() -> Any:
    """isal.isal_zlib when installed, else the standard zlib: the same deflate format and
    interface here (docs/decisions/0025-case-build-speed.md). Imported on first use."""
    global _FAST_ZLIB
    if _FAST_ZLIB is None:
        try:
            from isal import isal_zlib

            _FAST_ZLIB = isal_zlib
        except ImportError:  # optional: the standard zlib reads and writes the same format
            _FAST_ZLIB = zlib
    return _FAST_ZLIB


# A package file up to this size is read with one system call and parsed in memory:
# the many small reads and seeks of zipfile would each release and take back the GIL,
# which costs more than the reads themselves while other threads want it.
SMALL_PACKAGE_BYTES = 1 << 20


def _small_in_memory(path: str | Path | BinaryIO) -> str | Path | BinaryIO:
    """``path`` itself, or for a small file an in-memory copy of its bytes."""
    if not isinstance(path, str | Path):
        return path
    # O_NONBLOCK: opening a FIFO must not wait for a writer; the check below refuses it
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise PackageError(
            f"{path} is not a regular file (a device, a FIFO or a folder)",
            code="package.not_regular_file",
        )
    os.set_blocking(fd, True)
    with open(fd, "rb", buffering=0) as f:
        if info.st_size > SMALL_PACKAGE_BYTES:
            return path  # large: zipfile streams it from the file
        data = f.read(SMALL_PACKAGE_BYTES + 1)  # counted: a file may grow meanwhile
    return path if len(data) > SMALL_PACKAGE_BYTES else io.BytesIO(data)


def check_member_name(name: str, limits: PackageLimits) -> None:
    """Refuse names that could escape an extraction folder or are ambiguous."""
    if not name:
        raise PackageError("empty member name", code="package.invalid_name")
    if len(name.encode("utf-8", "surrogatepass")) > limits.max_name_bytes:
        raise PackageError(f"member name too long: {name[:80]!r}", code="package.invalid_name")
    if _CONTROL_CHARACTER.search(name):
        raise PackageError(f"control character in name {name!r}", code="package.invalid_name")
    if name.startswith("/") or "\\" in name or (len(name) > 1 and name[1] == ":"):
        raise PackageError(
            f"absolute or drive-qualified name {name!r}", code="package.absolute_path"
        )
    parts = name.rstrip("/").split("/")
    if ".." in parts or "." in parts:
        raise PackageError(f"path traversal in name {name!r}", code="package.path_traversal")
    if "" in parts:
        raise PackageError(f"empty path component in {name!r}", code="package.invalid_name")


class _CountingReader(io.RawIOBase):
    """Wraps a member stream; refuses to yield more than ``limit`` bytes."""

    def __init__(self, inner: IO[bytes], limit: int, name: str) -> None:
        self._inner = inner
        self._limit = limit
        self._name = name
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer)
        want = min(len(view), self._limit - self.count + 1)
        data = self._inner.read(want)
        n = len(data)
        self.count += n
        if self.count > self._limit:
            raise PackageError(
                f"member {self._name!r} yields more bytes than declared or allowed",
                code="package.size_mismatch",
            )
        view[:n] = data
        return n

    def close(self) -> None:
        self._inner.close()
        super().close()


class PackageReader:
    """Read-only view of one package ZIP file.

    Use as a context manager (or call :meth:`close`). ``manifest`` is parsed on open.
    Member access: :meth:`names`, :meth:`size`, :meth:`read` (bytes, bounded),
    :meth:`open` (a stream), :meth:`sha256` (streamed), :meth:`infos`.
    """

    def __init__(
        self,
        path: str | Path | BinaryIO,
        *,
        limits: PackageLimits | None = None,
        require_manifest: bool = True,
    ) -> None:
        self.limits = limits or PackageLimits()
        self.path = Path(path) if isinstance(path, str | Path) else None
        try:
            self._zip = zipfile.ZipFile(_small_in_memory(path), "r")
        except FileNotFoundError:
            raise PackageError(f"no such package file: {path}", code="package.not_found") from None
        except UnicodeDecodeError as exc:
            # a name flagged UTF-8 (bit 11) whose bytes are not UTF-8
            raise PackageError(
                f"a member name is flagged UTF-8 but is not: {exc}",
                code="package.invalid_utf8_name",
            ) from None
        except READ_ERRORS as exc:
            raise PackageError(f"not a readable ZIP file: {exc}", code="package.not_zip") from None
        try:
            self._infos = self._validate_entries()
            self.manifest: Manifest | None = None
            if MANIFEST_NAME in self._infos:
                data = self.read(MANIFEST_NAME, max_bytes=self.limits.max_manifest_bytes)
                self.manifest = Manifest.from_bytes(data)
            elif require_manifest:
                raise PackageError("package has no manifest.json", code="package.manifest_missing")
        except BaseException:
            self._zip.close()
            raise

    # -- validation ---------------------------------------------------------------------

    def _validate_entries(self) -> dict[str, zipfile.ZipInfo]:
        limits = self.limits
        infos = self._zip.infolist()
        if len(infos) > limits.max_members:
            raise PackageError(
                f"{len(infos)} members exceed the limit of {limits.max_members}",
                code="package.too_many_members",
            )
        seen: dict[str, zipfile.ZipInfo] = {}
        folded: set[str] = set()
        total = 0
        archive_bytes = 0
        for info in infos:
            name = info.filename
            if "\x00" in info.orig_filename:
                # zipfile cuts a name at its first NUL: "original/a\0b" would pass as
                # "original/a"
                raise PackageError(
                    f"member name {info.orig_filename!r} holds a NUL character",
                    code="package.nul_in_name",
                )
            archive_bytes += info.compress_size
            if info.flag_bits & 0x800 == 0 and not name.isascii():
                raise PackageError(
                    f"member name {name!r} is not marked UTF-8 (flag bit 11)",
                    code="package.non_utf8_name",
                )
            check_member_name(name, limits)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise PackageError(f"symbolic link {name!r}", code="package.symlink")
            if info.flag_bits & 0x1:
                raise PackageError(f"encrypted member {name!r}", code="package.encrypted")
            if name in seen:
                raise PackageError(f"duplicate member name {name!r}", code="package.duplicate_name")
            key = name.casefold()
            if key in folded:
                raise PackageError(
                    f"member names differ only by case: {name!r}", code="package.duplicate_name"
                )
            folded.add(key)
            if info.file_size > limits.max_member_bytes:
                raise PackageError(
                    f"member {name!r} declares {info.file_size} bytes, over the limit "
                    f"of {limits.max_member_bytes}",
                    code="package.member_too_large",
                )
            if info.file_size >= limits.ratio_floor_bytes and (
                info.file_size > limits.max_compression_ratio * max(info.compress_size, 1)
            ):
                raise PackageError(
                    f"member {name!r} compression ratio exceeds {limits.max_compression_ratio}",
                    code="package.compression_ratio",
                )
            total += info.file_size
            if total > limits.max_total_bytes:
                raise PackageError(
                    f"members declare more than {limits.max_total_bytes} bytes in all",
                    code="package.total_too_large",
                )
            seen[name] = info
        if total > max(limits.total_floor_bytes, limits.max_package_ratio * archive_bytes):
            # many members each under the per-member ratio floor can still inflate a
            # small file into gigabytes: the whole package has a ratio bound too
            raise PackageError(
                f"members declare {total} bytes from {archive_bytes} compressed: the "
                f"package's compression ratio exceeds {limits.max_package_ratio}",
                code="package.compression_ratio",
            )
        return seen

    # -- access -------------------------------------------------------------------------

    def require_manifest(self) -> Manifest:
        if self.manifest is None:
            raise PackageError("package has no manifest.json", code="package.manifest_missing")
        return self.manifest

    def names(self) -> list[str]:
        """All member names, in ZIP order (directory entries included)."""
        return list(self._infos)

    def files(self, prefix: str = "") -> list[str]:
        """File member names (no directory entries) under ``prefix``, sorted."""
        return sorted(n for n in self._infos if n.startswith(prefix) and not n.endswith("/"))

    def original_files(self) -> list[str]:
        return self.files(ORIGINAL_PREFIX)

    def __contains__(self, name: object) -> bool:
        return name in self._infos

    def info(self, name: str) -> zipfile.ZipInfo:
        try:
            return self._infos[name]
        except KeyError:
            raise PackageError(f"no member {name!r}", code="package.member_missing") from None

    def infos(self) -> list[zipfile.ZipInfo]:
        return list(self._infos.values())

    def size(self, name: str) -> int:
        """Declared uncompressed size (enforced while streaming)."""
        return self.info(name).file_size

    def open(self, name: str) -> io.BufferedReader:
        """A binary stream of the member; it stops with ``package.size_mismatch`` if the
        member yields more bytes than it declared. CRC is checked by zipfile at the end."""
        info = self.info(name)
        try:
            inner = self._zip.open(info, "r")
        except READ_ERRORS as exc:
            raise PackageError(
                f"cannot open member {name!r}: {exc}", code="package.corrupt"
            ) from None
        return io.BufferedReader(_CountingReader(inner, info.file_size, name), CHUNK)

    def iter_chunks(self, name: str, chunk_size: int = CHUNK) -> Iterator[bytes]:
        with self.open(name) as stream:
            while True:
                try:
                    chunk = stream.read(chunk_size)
                except PackageError:
                    raise
                except READ_ERRORS as exc:
                    raise PackageError(
                        f"member {name!r} is corrupt: {exc}", code="package.corrupt"
                    ) from None
                if not chunk:
                    return
                yield chunk

    def read(self, name: str, *, max_bytes: int | None = None) -> bytes:
        """The whole member as bytes; refuses members larger than ``max_bytes``."""
        size = self.size(name)
        if max_bytes is not None and size > max_bytes:
            raise PackageError(
                f"member {name!r} has {size} bytes, more than {max_bytes} allowed here",
                code="package.member_too_large",
            )
        info = self.info(name)
        if info.compress_type == zipfile.ZIP_DEFLATED and size >= FAST_INFLATE_BYTES:
            z = fast_zlib()
            if z is not zlib:
                return self._inflate_whole(info, z)
        try:
            with self._zip.open(info, "r") as stream:
                # zipfile never yields more than the declared size and checks the CRC-32
                data = stream.read(size + 1)
        except READ_ERRORS as exc:
            raise PackageError(
                f"member {name!r} is corrupt: {exc}", code="package.corrupt"
            ) from None
        if len(data) != size:
            raise PackageError(f"member {name!r} is truncated", code="package.size_mismatch")
        return data

    def _inflate_whole(self, info: zipfile.ZipInfo, z: Any) -> bytes:
        """The member's bytes inflated in one call, with zipfile's checks: its local
        header, at most the declared size (a bomb stops there), the whole stream, the
        CRC-32."""
        name = info.filename
        fp = self._zip.fp
        assert fp is not None
        try:
            fp.seek(info.header_offset)
            header = fp.read(LOCAL_HEADER.size)
            if len(header) != LOCAL_HEADER.size or header[:4] != LOCAL_MAGIC:
                raise PackageError(f"bad local header for {name!r}", code="package.corrupt")
            fields = LOCAL_HEADER.unpack(header)
            fp.seek(info.header_offset + LOCAL_HEADER.size + fields[10] + fields[11])
            raw = fp.read(info.compress_size)
            inflater = z.decompressobj(-15)
            data: bytes = inflater.decompress(raw, info.file_size + 1)
            complete = inflater.eof
        except PackageError:
            raise
        except (*READ_ERRORS, z.error) as exc:
            raise PackageError(
                f"member {name!r} is corrupt: {exc}", code="package.corrupt"
            ) from None
        if len(data) > info.file_size or (not complete and len(data) == info.file_size):
            # zipfile stops at the declared size and then fails the CRC check: the same code
            raise PackageError(
                f"member {name!r} is corrupt: more than its declared {info.file_size} bytes",
                code="package.corrupt",
            )
        if len(raw) != info.compress_size or len(data) < info.file_size or not complete:
            raise PackageError(f"member {name!r} is truncated", code="package.size_mismatch")
        if z.crc32(data) != info.CRC:
            raise PackageError(f"member {name!r} is corrupt: bad CRC-32", code="package.corrupt")
        return data

    def sha256(self, name: str) -> str:
        """Hex SHA-256 of a member's bytes, streamed."""
        digest = hashlib.sha256()
        for chunk in self.iter_chunks(name):
            digest.update(chunk)
        return digest.hexdigest()

    def raw_zip(self) -> zipfile.ZipFile:
        """The underlying ZipFile (for the writer's member copy)."""
        return self._zip

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> PackageReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
