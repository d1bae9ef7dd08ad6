"""Shelter lists as CSV on SQLite and PostgreSQL: the columns, bad rows by line number,
all or nothing, idempotence."""

from __future__ import annotations

import io

import pytest

from trace_app.domain.errors import InvalidInputError
from trace_app.domain.pfif_import import ImportRefusedError
from trace_app.interchange.shelter_csv import CsvError, read_shelter_csv
from trace_app.store.db import Database

from .conftest import counts, import_csv, new_incident, publish, statuses

GOOD = (
    "full_name,age,status,last_known_location,alternate_names,notes\n"
    "Asha Rai,30,,Camp 2 hall,Asha;Aashaa,arrived with her son\n"
    "राम थापा,62,admitted,Camp 2 clinic,,\n"
    "Li Wei,,believed_missing,,,\n"
)


def test_rows_become_people_and_reports_from_the_source(database: Database) -> None:
    incident = new_incident(database)
    publish(database, incident, "Asha Rai", "missing", age=31)  # an open alert
    summary = import_csv(database, incident, GOOD)
    assert (summary.people_added, summary.people_matched, summary.notes_added) == (2, 1, 3)
    assert statuses(database, incident) == {
        "Asha Rai": ["missing", "safe"],  # the default status: at the shelter
        "राम थापा": ["admitted"],  # a Trace status is kept as it is
        "Li Wei": ["missing"],  # a PFIF status by the table
    }
    assert counts(database, incident) == (3, 4, 1)  # Asha's alert closed, Li Wei's opened
    assert [(s.kind, s.record_id) for s in summary.skipped] == [("column", "notes")]


def test_the_same_list_twice_adds_nothing(database: Database) -> None:
    incident = new_incident(database)
    import_csv(database, incident, GOOD)
    before = counts(database, incident)
    again = import_csv(database, incident, GOOD)
    assert (again.people_added, again.notes_added) == (0, 0)
    assert counts(database, incident) == before


BAD = (
    "full_name,given_name,family_name,age,status,source_date\n"  # line 1
    "Asha Rai,,,30,safe,\n"  # 2: good
    ",,,40,safe,\n"  # 3: no name
    "Bo Lin,,,abc,safe,\n"  # 4: bad age
    ",Cy,Dee,20,fine,\n"  # 5: bad status (given + family name is a name)
    '"Dan\nMultiline",,,20,safe,\n'  # 6-7: a quoted line break; the row ends on line 7
    "Eve Ng,,,20,safe,2999-01-01T00:00:00Z\n"  # 8: in the future
    "Fay Ho,,,20,safe,,,extra\n"  # 9: more values than columns
    "Gus Oh,,,20,seen,\n"  # 10: good
)


def test_every_bad_row_is_reported_by_its_line_and_nothing_is_kept(database: Database) -> None:
    incident = new_incident(database)
    with pytest.raises(ImportRefusedError) as caught:
        import_csv(database, incident, BAD)
    summary = caught.value.summary
    lines = {r.index: " ".join(r.reasons) for r in summary.invalid}
    assert sorted(lines) == [3, 4, 5, 8, 9]
    assert "no full_name" in lines[3]
    assert "age 'abc'" in lines[4]
    assert "status 'fine'" in lines[5]
    assert "future" in lines[8]
    assert "more values than columns" in lines[9]
    assert "rows are not valid (listed by line number)" in str(caught.value)
    assert summary.lines(by_line=True)[1].startswith("line 3: ")
    assert counts(database, incident) == (0, 0, 0)


def test_skip_invalid_keeps_the_good_rows(database: Database) -> None:
    incident = new_incident(database)
    summary = import_csv(database, incident, BAD, skip=True)
    assert summary.invalid_count == 5
    assert statuses(database, incident) == {
        "Asha Rai": ["safe"],
        "Dan": ["safe"],  # a name's further lines are alternate names, as in PFIF
        "Gus Oh": ["seen"],
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "no header row"),
        (b"name,age\nAsha,3\n", "names no full_name"),
        (b"full_name\n\xff\xfe\n", "not UTF-8"),
    ],
)
def test_unreadable_files(data: bytes, message: str) -> None:
    with pytest.raises(CsvError, match=message):
        read_shelter_csv(io.BytesIO(data), source_name="S", domain="d.org", max_bytes=1000)


def test_a_bad_source_name_is_refused(database: Database) -> None:
    incident = new_incident(database)
    with pytest.raises(InvalidInputError):
        import_csv(database, incident, GOOD, source="   ")
