"""PackageWriter: derive generation N+1 of a package from generation N.

Rules (one place): every member of generation N is copied into N+1 byte-identical
(its compressed bytes are copied as they are); ``manifest.json`` is the only member that
is rewritten. A member that exists is never replaced. Nothing new may be added under
``original/`` after the first generation, nor into an ``analysis/revisions/NNNN/``
folder that already has a member (frozen namespaces). Phase folders such as
``analysis/interpretations/NNNN/`` may receive new files; existing files stay.
``package_id`` and ``case_id`` never change and ``package_generation`` is exactly N+1.

A writer produces bytes into a file object; publishing that file atomically is the
store's job (:meth:`PackageStore.publish`).
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.packages.canonical import canonical_json
from viano_bug_analysis.packages.format import (
    MANIFEST_NAME,
    ORIGINAL_PREFIX,
    ZIP_DATE_TIME,
    Checkpoint,
    Manifest,
    PackageLimits,
    frozen_namespace,
)
from viano_bug_analysis.packages.reader import (
    CHUNK,
    LOCAL_HEADER,
    LOCAL_MAGIC,
    PackageReader,
    check_member_name,
    fast_zlib,
)
from viano_bug_analysis.packages.threads import background_pool

_USE_DATA_DESCRIPTOR = 0x08
LARGE_MEMBER_BYTES = 1 << 20
# Large members (canonical cases) are deflated at level 1 in independent 1 MiB pieces
# joined by sync flushes (as pigz does): one valid deflate stream, the same bytes
# whatever the number of threads, compressed in the background (the compressor releases
# the GIL) from add_bytes() until write() needs them. The compressor is ISA-L's
# (python-isal, ~4x faster than zlib at level 1 and a plain deflate stream) when that
# package is installed, else the standard zlib (docs/decisions/0025-case-build-speed.md).
DEFLATE_PIECE_BYTES = 1 << 20
_DEFLATE_LEVEL_LARGE = 1


def _deflate_piece(piece: memoryview, last: bool) -> bytes:
    z = fast_zlib()
    compressor = z.compressobj(_DEFLATE_LEVEL_LARGE, z.DEFLATED, -15)
    out: bytes = compressor.compress(piece)
    tail: bytes = compressor.flush(z.Z_FINISH if last else z.Z_SYNC_FLUSH)
    return out + tail


def _crc32(data: bytes) -> int:
    return int(fast_zlib().crc32(data)) & 0xFFFFFFFF


class _Deflating:
    """Background raw-deflate of one large member: CRC-32 and pieces, in order."""

    def __init__(self, data: bytes) -> None:
        pool = background_pool()
        view = memoryview(data)
        starts = range(0, len(data), DEFLATE_PIECE_BYTES)
        self.size = len(data)
        self._crc = pool.submit(_crc32, data)
        self._pieces: list[Future[bytes]] = [
            pool.submit(_deflate_piece, view[i : i + DEFLATE_PIECE_BYTES], i == starts[-1])
            for i in starts
        ]

    def result(self) -> tuple[int, list[bytes]]:
        return self._crc.result(), [f.result() for f in self._pieces]


@dataclass(frozen=True)
class _NewMember:
    name: str
    data: bytes | None
    path: Path | None
    compress: bool
    deflating: _Deflating | None = None


class PackageWriter:
    """Collects additions and manifest changes, then writes the next generation.

    ``PackageWriter(base)`` starts from an open generation (its manifest becomes the new
    manifest with ``package_generation + 1``). ``PackageWriter.new(manifest)`` starts a
    first generation (importers): then ``original/`` members may be added.
    """

    def __init__(self, base: PackageReader | None, manifest: Manifest | None = None) -> None:
        self.base = base
        if base is not None:
            base_manifest = base.require_manifest()
            self.manifest = manifest or base_manifest.evolve(
                package_generation=base_manifest.package_generation + 1
            )
            self._base_names = set(base.names())
            self._frozen = {
                ns for ns in (frozen_namespace(n) for n in self._base_names) if ns is not None
            }
        else:
            if manifest is None:
                raise ValueError("a first generation needs a manifest")
            self.manifest = manifest
            self._base_names = set()
            self._frozen = set()
        self._added: dict[str, _NewMember] = {}
        self._limits = base.limits if base is not None else PackageLimits()
        self._inputs_from: PackageReader | None = None

    @classmethod
    def resupply(cls, base: PackageReader, supplied: PackageReader) -> PackageWriter:
        """Generation N+1 whose raw inputs (``original/`` and the manifest's ``inputs`` and
        ``source``) come from a newly supplied package of the same identity. Everything
        else of N (analysis history, unknown files, pointers, checkpoints) is kept; the
        old analysis revision then no longer matches the raw-input fingerprint, so the
        next build confirms a new revision. This is the only way original/ changes."""
        writer = cls(base)
        new = supplied.require_manifest()
        if (new.case_id, new.package_id) != (writer.manifest.case_id, writer.manifest.package_id):
            raise PackageError(
                "resupply must keep case_id and package_id", code="package.identity_mismatch"
            )
        writer._inputs_from = supplied
        writer.manifest = writer.manifest.evolve(inputs=new.inputs, source=new.source)
        writer._base_names = {n for n in writer._base_names if not n.startswith(ORIGINAL_PREFIX)}
        writer._base_names |= set(supplied.original_files())
        return writer

    @classmethod
    def new(cls, manifest: Manifest) -> PackageWriter:
        return cls(None, manifest)

    # -- additions ------------------------------------------------------------------------

    def _check_new_name(self, name: str) -> None:
        check_member_name(name, self._limits)
        if name == MANIFEST_NAME:
            raise PackageError(
                "manifest.json is written from the manifest; do not add it",
                code="package.frozen_member",
            )
        if name.endswith("/"):
            raise PackageError(
                f"directory entries are not added: {name!r}", code="package.invalid_name"
            )
        if name in self._base_names or name in self._added:
            raise PackageError(
                f"member {name!r} already exists and is immutable", code="package.frozen_member"
            )
        if self.base is not None and name.startswith(ORIGINAL_PREFIX):
            raise PackageError(
                f"original/ is fixed after the first generation: {name!r}",
                code="package.frozen_member",
            )
        namespace = frozen_namespace(name)
        if namespace is not None and namespace in self._frozen:
            raise PackageError(
                f"{namespace} is frozen: it already exists in the base generation",
                code="package.frozen_namespace",
            )

    def add_bytes(self, name: str, data: bytes, *, compress: bool = True) -> None:
        """Add a new member holding ``data``."""
        self._check_new_name(name)
        data = bytes(data)
        deflating = _Deflating(data) if compress and len(data) >= LARGE_MEMBER_BYTES else None
        self._added[name] = _NewMember(name, data, None, compress, deflating)

    def add_json(self, name: str, obj: Any) -> bytes:
        """Add a new member holding canonical JSON of ``obj``; returns the bytes."""
        data = canonical_json(obj)
        self.add_bytes(name, data)
        return data

    def add_file(self, name: str, path: str | Path, *, compress: bool = True) -> None:
        """Add a new member streamed from a file on disk when the package is written."""
        self._check_new_name(name)
        self._added[name] = _NewMember(name, None, Path(path), compress)

    def added_names(self) -> list[str]:
        return list(self._added)

    # -- manifest -------------------------------------------------------------------------

    def update_manifest(self, **changes: Any) -> Manifest:
        """Replace manifest fields (see :class:`Manifest`); returns the new manifest."""
        self.manifest = self.manifest.evolve(**changes)
        return self.manifest

    def set_pointer(self, pointer: str, member: str) -> None:
        pointers = dict(self.manifest.pointers)
        pointers[pointer] = member
        self.manifest = self.manifest.evolve(pointers=pointers)

    def clear_pointers(self, names: Iterable[str]) -> None:
        pointers = {k: v for k, v in self.manifest.pointers.items() if k not in set(names)}
        self.manifest = self.manifest.evolve(pointers=pointers)

    def add_checkpoint(self, name: str, path: str, payload: dict[str, Any]) -> Checkpoint:
        """Write an immutable checkpoint file at ``path`` and append its manifest entry.

        The file holds ``payload`` plus ``checkpoint``, ``analysis_revision``,
        ``package_generation``, ``case_id`` and ``package_id`` taken from the manifest as
        it is now (set ``analysis_revision`` before calling).
        """
        m = self.manifest
        body = dict(payload)
        body.update(
            checkpoint=name,
            analysis_revision=m.analysis_revision,
            package_generation=m.package_generation,
            case_id=m.case_id,
            package_id=m.package_id,
        )
        self.add_json(path, body)
        entry = Checkpoint(name, m.analysis_revision, m.package_generation, path)
        self.manifest = m.evolve(checkpoints=(*m.checkpoints, entry))
        return entry

    # -- output ---------------------------------------------------------------------------

    def _check_manifest(self) -> None:
        m = self.manifest
        if self.base is not None:
            b = self.base.require_manifest()
            if (m.package_id, m.case_id) != (b.package_id, b.case_id):
                raise PackageError(
                    "package_id and case_id never change between generations",
                    code="package.identity_mismatch",
                )
            if m.package_generation != b.package_generation + 1:
                raise PackageError(
                    f"next generation must be {b.package_generation + 1}, "
                    f"not {m.package_generation}",
                    code="package.generation_mismatch",
                )
        m.check_references(self._base_names | set(self._added))

    def write(self, out: BinaryIO) -> None:
        """Write the whole package to ``out`` (a seekable binary file)."""
        self._check_manifest()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zout:
            zout.writestr(_new_info(MANIFEST_NAME, True), self.manifest.to_bytes())
            if self.base is not None:
                for info in self.base.infos():
                    if info.filename == MANIFEST_NAME:
                        continue
                    if self._inputs_from is not None and info.filename.startswith(ORIGINAL_PREFIX):
                        continue
                    _copy_member_raw(self.base, info, zout)
            if self._inputs_from is not None:
                for info in self._inputs_from.infos():
                    if info.filename.startswith(ORIGINAL_PREFIX):
                        _copy_member_raw(self._inputs_from, info, zout)
            for member in self._added.values():
                info = _new_info(member.name, member.compress)
                if member.deflating is not None:
                    crc, pieces = member.deflating.result()
                    info.CRC = crc
                    info.file_size = member.deflating.size
                    info.compress_size = sum(len(p) for p in pieces)
                    _write_raw_member(zout, info, iter(pieces))
                elif member.data is not None:
                    zout.writestr(info, member.data, compresslevel=6)
                else:
                    assert member.path is not None
                    with (
                        open(member.path, "rb") as src,
                        zout.open(info, "w", force_zip64=True) as dst,
                    ):
                        shutil.copyfileobj(src, dst, CHUNK)


def _new_info(name: str, compress: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, ZIP_DATE_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.external_attr = 0o100644 << 16
    info.create_system = 3
    return info


def _copy_member_raw(reader: PackageReader, src: zipfile.ZipInfo, zout: zipfile.ZipFile) -> None:
    """Copy one member's compressed bytes unchanged into ``zout``.

    zipfile has no public raw-copy API; this writes a local header from a ZipInfo copy
    (public ``FileHeader``) and then the compressed bytes, and registers the entry in
    ``zout.filelist``/``NameToInfo`` as ``ZipFile.writestr`` does. The content (and its
    CRC-32) is exactly the source's; the store verifies CRCs when a package is added.
    """
    zin = reader.raw_zip()
    fp = zin.fp
    assert fp is not None
    fp.seek(src.header_offset)
    header = fp.read(LOCAL_HEADER.size)
    if len(header) != LOCAL_HEADER.size or header[:4] != LOCAL_MAGIC:
        raise PackageError(f"bad local header for {src.filename!r}", code="package.corrupt")
    fields = LOCAL_HEADER.unpack(header)
    name_len, extra_len = fields[10], fields[11]
    fp.seek(src.header_offset + LOCAL_HEADER.size + name_len + extra_len)

    dst = zipfile.ZipInfo(src.filename, src.date_time)
    dst.compress_type = src.compress_type
    dst.comment = src.comment
    dst.create_system = src.create_system
    dst.create_version = src.create_version
    dst.extract_version = src.extract_version
    dst.flag_bits = src.flag_bits & ~_USE_DATA_DESCRIPTOR
    dst.internal_attr = src.internal_attr
    dst.external_attr = src.external_attr
    dst.CRC = src.CRC
    dst.compress_size = src.compress_size
    dst.file_size = src.file_size

    def chunks() -> Iterator[bytes]:
        remaining = src.compress_size
        while remaining > 0:
            chunk = fp.read(min(CHUNK, remaining))
            if not chunk:
                raise PackageError(f"member {src.filename!r} is truncated", code="package.corrupt")
            yield chunk
            remaining -= len(chunk)

    _write_raw_member(zout, dst, chunks())


def _write_raw_member(zout: zipfile.ZipFile, dst: zipfile.ZipInfo, chunks: Iterator[bytes]) -> None:
    """Write a local header for ``dst`` (CRC and sizes set) and then its compressed
    bytes, and register the entry as ``ZipFile.writestr`` does."""
    assert zout.fp is not None
    dst.extra = b""
    zip64 = dst.file_size > zipfile.ZIP64_LIMIT or dst.compress_size > zipfile.ZIP64_LIMIT
    dst.header_offset = zout.fp.tell()
    zout.fp.write(dst.FileHeader(zip64))
    for chunk in chunks:
        zout.fp.write(chunk)
    zout.filelist.append(dst)
    zout.NameToInfo[dst.filename] = dst
    zout.start_dir = zout.fp.tell()
    zout._didModify = True  # type: ignore[attr-defined]
