"""open_current and publish_open hand back the reader they validated with: it reads the
generation they return, and the store's files and index are as with current/publish."""

from __future__ import annotations

from pathlib import Path

from viano_helpers import intake_package

from viano_bug_analysis.packages import PackageStore, PackageWriter


def test_open_current_and_publish_open_readers(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "store")
    gen, _ = store.add(intake_package(tmp_path / "in.zip"))
    with store.lock(gen.case_id, gen.package_id) as op:
        current, reader = op.open_current()
        with reader:
            assert current == op.current()
            assert reader.require_manifest() == current.manifest
            writer = PackageWriter(reader)
            writer.add_bytes("analysis/note.txt", b"checked")
            published, fresh = op.publish_open(writer)
        with fresh:
            assert fresh.path == published.path and published.path.is_file()
            assert fresh.require_manifest() == published.manifest
            assert fresh.read("analysis/note.txt") == b"checked"
            with published.open() as again:
                assert fresh.names() == again.names()
        assert published == op.current()
        assert published.generation == current.generation + 1
    assert [p.name for p in published.path.parent.iterdir() if p.name.startswith(".tmp")] == []
