"""PFIF 1.4 export and import of 10,000 persons with 30,000 notes, against a plain
``xml.etree`` write and parse of the same document, and their memory at two sizes.

- **Export**: our streaming writer (:func:`trace_app.interchange.pfif.iter_pfif`) writing
  the records to a file, against building the same document as an ``ElementTree`` and
  ``write``-ing it. Both start from the same field dicts.
- **Import**: our streaming reader (defusedxml ``iterparse``, records cleared as they
  end) with the mapping into typed records and their checks
  (:mod:`trace_app.interchange.pfif_mapping`), against a plain ``ElementTree.parse`` of
  the file (which only builds the tree).
- **Memory**: tracemalloc's peak while reading and while writing 2,000 and 10,000
  persons; streaming means the peak does not grow with the file.
- **Database**: the whole feature, on SQLite or the database ``--database-url`` names.
  ``import_pfif`` of the 10,000 persons into an empty incident (the identity rule,
  look-alikes for the first 200, every note published as a report with its claim and the
  alert rule, the record ids kept), against a plain ``ElementTree.parse`` of the same
  file; and the export of that incident (``iter_incident_pfif``, from the database)
  against two baselines: the format layer's (build an ``ElementTree`` of the same records
  and write it) and a plain ``ElementTree.write`` of the exported document's tree,
  already in memory. Memory: tracemalloc's peak importing and exporting 1,000 and 4,000
  persons.

Targets: export and import each at most 3x their baseline (the format layer: best of 2,
alternating; the database: one run each, printed as met or MISSED); the peak at the
larger size at most 1.5x the peak at the smaller.

Run: .venv/bin/python bench/bench_pfif.py [--database-url URL]  (about two minutes)
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from trace_app.domain.pfif_import import ImportSummary
from trace_app.interchange.pfif import (
    NOTE_FIELDS,
    PERSON_FIELDS,
    PFIF_1_4_NS,
    PersonOut,
    iter_pfif,
    read_pfif,
)
from trace_app.interchange.pfif_mapping import InvalidRecord, note_record, person_record

PERSONS = 10_000
NOTES_PER_PERSON = 3
SMALL = 2_000
DB_SMALL = 1_000
DB_LARGE = 4_000
REPEATS = 2
MAX_RATIO = 3.0
MAX_MEMORY_GROWTH = 1.5
STATUSES = ("believed_missing", "", "believed_alive", "believed_dead")
NAMES = ("Maya Gurung", "सुनिता राई", "王小明", "عمر حداد", "Lena Okafor", "Tomás Quispe")


def records(count: int) -> Iterator[PersonOut]:
    for i in range(count):
        pid = f"bench.example.org/per_{i:06d}"
        notes = [
            {
                "note_record_id": f"bench.example.org/clm_{i:06d}_{j}",
                "person_record_id": pid,
                "author_name": f"Relief desk {i % 40}",
                "source_date": f"2026-07-{1 + j:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
                "entry_date": "2026-07-20T00:00:00Z",
                "author_made_contact": "true" if (i + j) % 5 == 0 else "false",
                "status": STATUSES[(i + j) % len(STATUSES)],
                "last_known_location": f"Camp {i % 17}, tent {j}",
                "text": f"Report {j} about person {i}: registered at the desk & given a blanket.",
            }
            for j in range(NOTES_PER_PERSON)
        ]
        yield PersonOut(
            fields={
                "person_record_id": pid,
                "entry_date": "2026-07-20T00:00:00Z",
                "source_name": "bench.example.org",
                "source_date": "2026-07-01T00:00:00Z",
                "full_name": f"{NAMES[i % len(NAMES)]} {i}",
                "alternate_names": f"Alias {i}\nOther {i}",
                "age": str(i % 90),
                "description": "Generated for the benchmark.",
            },
            notes=notes,
        )


def ours_write(path: Path, count: int) -> None:
    with path.open("wb") as out:
        for chunk in iter_pfif(records(count)):
            out.write(chunk)


def etree_write(path: Path, count: int) -> None:
    ET.register_namespace("pfif", PFIF_1_4_NS)
    root = ET.Element(f"{{{PFIF_1_4_NS}}}pfif")
    for person in records(count):
        element = ET.SubElement(root, f"{{{PFIF_1_4_NS}}}person")
        for name in PERSON_FIELDS:
            if person.fields.get(name):
                ET.SubElement(element, f"{{{PFIF_1_4_NS}}}{name}").text = person.fields[name]
        for note in person.notes:
            child = ET.SubElement(element, f"{{{PFIF_1_4_NS}}}note")
            for name in NOTE_FIELDS:
                if note.get(name):
                    ET.SubElement(child, f"{{{PFIF_1_4_NS}}}{name}").text = note[name]
    ET.ElementTree(root).write(path, encoding="UTF-8", xml_declaration=True)


def ours_read(path: Path) -> int:
    count = 0
    with path.open("rb") as source:
        for raw in read_pfif(source, max_bytes=1 << 30):
            record = person_record(raw) if raw.kind == "person" else note_record(raw)
            assert not isinstance(record, InvalidRecord), record
            for note in raw.notes:
                assert not isinstance(note_record(note), InvalidRecord)
                count += 1
            count += 1
    return count


def etree_read(path: Path) -> int:
    return len(ET.parse(path).getroot())


def best(work: Callable[[], object]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def peak(work: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# The database the database figures use: a new SQLite file in the run's folder, or the
# one --database-url names (an empty PostgreSQL database or schema; each run adds an
# incident of its own and leaves it there).
DATABASE_URL: str | None = None


class DatabaseRun:
    """A database with a new, empty incident, for the database import and export."""

    def __init__(self, folder: Path, name: str) -> None:
        from trace_app.domain.audit import Actor
        from trace_app.domain.incidents import create_incident
        from trace_app.store.db import Database, make_engine, migrate

        self.db = Database(make_engine(DATABASE_URL or f"sqlite:///{folder / name}.db"))
        migrate(self.db.engine)
        with self.db.session() as s:
            self.incident = create_incident(
                s, f"Bench {name} {time.time_ns()}", actor=Actor.operator("benchmark")
            ).id

    def import_file(self, path: Path) -> ImportSummary:
        from trace_app.domain.audit import Actor
        from trace_app.domain.pfif_import import import_pfif

        with self.db.session() as s, path.open("rb") as data:
            return import_pfif(
                s,
                self.incident,
                data,
                domain="trace.example.org",
                actor=Actor.operator("benchmark"),
            )

    def export_file(self, path: Path) -> None:
        from trace_app.domain.pfif_export import iter_incident_pfif

        with self.db.sessions() as s, path.open("wb") as out:
            for chunk in iter_incident_pfif(s, self.incident, domain="trace.example.org"):
                out.write(chunk)

    def close(self) -> None:
        self.db.dispose()


def database_document(path: Path, count: int) -> None:
    """The benchmark document with dates before now (a report may not come from the
    future), as a user would import it."""
    with path.open("wb") as out:
        for chunk in iter_pfif(records(count)):
            out.write(chunk.replace(b"2026-07-20", b"2026-07-10"))


def database_figures(folder: Path) -> dict[str, tuple[float, float]]:
    """The whole document imported into an empty incident, against a plain parse of it;
    the export of that incident, against two plain ``ElementTree`` baselines: building
    and writing the same records (the format layer's baseline, ``etree_write``) and
    writing the exported document's tree, already in memory (serialising only)."""
    source = folder / "db.xml"
    database_document(source, PERSONS)
    run = DatabaseRun(folder, "full")
    began = time.perf_counter()
    summary = run.import_file(source)
    imported = time.perf_counter() - began
    parsed = best(lambda: etree_read(source))
    exported_file = folder / "exported.xml"
    began = time.perf_counter()
    run.export_file(exported_file)
    exported = time.perf_counter() - began
    run.close()
    built = best(lambda: etree_write(folder / "built.xml", PERSONS))
    ET.register_namespace("pfif", PFIF_1_4_NS)
    tree = ET.parse(exported_file)
    serialised = best(lambda: tree.write(folder / "rewritten.xml", encoding="UTF-8"))
    # every note has a place, so none is a mere comment: all become reports
    assert summary.notes_added == PERSONS * NOTES_PER_PERSON, summary.lines()[:3]
    assert ours_read(exported_file) == PERSONS * (1 + NOTES_PER_PERSON)
    return {
        "import, against a parse": (imported, parsed),
        "export, against a build and write": (exported, built),
        "export, against a write of a tree in memory": (exported, serialised),
    }


def database_memory(folder: Path) -> dict[str, tuple[int, int]]:
    """tracemalloc's peak importing and exporting DB_SMALL and DB_LARGE persons."""
    peaks: dict[str, list[int]] = {"database import": [], "database export": []}
    for count in (DB_SMALL, DB_LARGE):
        source = folder / f"memory-{count}.xml"
        database_document(source, count)
        run = DatabaseRun(folder, f"memory-{count}")
        peaks["database import"].append(peak(partial(run.import_file, source)))
        peaks["database export"].append(peak(partial(run.export_file, folder / "out.xml")))
        run.close()
    return {kind: (low, high) for kind, (low, high) in peaks.items()}


def main() -> None:
    global DATABASE_URL
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url",
        help="run the database figures on this database (default: SQLite in a temporary "
        "folder), e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test",
    )
    DATABASE_URL = parser.parse_args().database_url
    backend = (DATABASE_URL or "sqlite").split(":", 1)[0].split("+", 1)[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ours_file, base_file = folder / "ours.xml", folder / "etree.xml"
        write_ours, write_base, read_ours, read_base = [], [], [], []
        for _ in range(REPEATS):
            write_base.append(best(lambda: etree_write(base_file, PERSONS)))
            write_ours.append(best(lambda: ours_write(ours_file, PERSONS)))
            read_base.append(best(lambda: etree_read(ours_file)))
            read_ours.append(best(lambda: ours_read(ours_file)))
        size = ours_file.stat().st_size
        assert ours_read(ours_file) == PERSONS * (1 + NOTES_PER_PERSON)
        export_ratio = min(write_ours) / min(write_base)
        import_ratio = min(read_ours) / min(read_base)
        print(
            f"document: {PERSONS:,} persons, {PERSONS * NOTES_PER_PERSON:,} notes, {size:,} bytes"
        )
        print(
            f"export: ours {min(write_ours):.2f} s, etree write {min(write_base):.2f} s, "
            f"ratio {export_ratio:.2f} (target <= {MAX_RATIO})"
        )
        print(
            f"import: ours {min(read_ours):.2f} s, etree parse {min(read_base):.2f} s, "
            f"ratio {import_ratio:.2f} (target <= {MAX_RATIO})"
        )
        small_file = folder / "small.xml"
        ours_write(small_file, SMALL)
        memory = {
            "read": (peak(lambda: ours_read(small_file)), peak(lambda: ours_read(ours_file))),
            "write": (
                peak(lambda: ours_write(folder / "w1.xml", SMALL)),
                peak(lambda: ours_write(folder / "w2.xml", PERSONS)),
            ),
        }
        for kind, (low, high) in memory.items():
            print(
                f"{kind} peak memory: {low / 1024:.0f} KiB at {SMALL:,} persons, "
                f"{high / 1024:.0f} KiB at {PERSONS:,} (x{high / low:.2f}, "
                f"target <= {MAX_MEMORY_GROWTH})"
            )
        database = database_figures(folder)
        for kind, (ours, plain) in database.items():
            ratio = ours / plain
            verdict = "met" if ratio <= MAX_RATIO else "MISSED"
            print(
                f"database {kind} ({backend}, every rule): ours {ours:.2f} s, etree "
                f"{plain:.2f} s, ratio {ratio:.1f} (target <= {MAX_RATIO}: {verdict})"
            )
        memory.update(database_memory(folder))
        for kind in ("database import", "database export"):
            low, high = memory[kind]
            print(
                f"{kind} peak memory: {low / 1024:.0f} KiB at {DB_SMALL:,} persons, "
                f"{high / 1024:.0f} KiB at {DB_LARGE:,} (x{high / low:.2f}, "
                f"target <= {MAX_MEMORY_GROWTH})"
            )
        assert export_ratio <= MAX_RATIO, export_ratio
        assert import_ratio <= MAX_RATIO, import_ratio
        # memory must not grow with the file, in the format layer and the database
        for kind, (low, high) in memory.items():
            assert high <= low * MAX_MEMORY_GROWTH, (kind, low, high)


if __name__ == "__main__":
    main()
