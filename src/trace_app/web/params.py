"""The API's path ids and list parameters, defined once for every feature's routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from trace_app.domain import people_cursor, queries
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS

# The largest list offset accepted (far beyond any incident; SQLite's integers end at 2**63).
MAX_OFFSET = 1_000_000_000

_Id = Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)
IncidentId = Annotated[str, _Id]
ReportId = Annotated[str, _Id]
PersonId = Annotated[str, _Id]
AlertId = Annotated[str, _Id]

SearchText = Annotated[str, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]
After = Annotated[
    str,
    Query(
        max_length=people_cursor.MAX_CURSOR_CHARACTERS,
        description="The next_after of the page before (no q or filter with it): the page "
        "after it, found by keyset however deep. Blank: the first page.",
    ),
]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
Limit = Annotated[int, Query(ge=1, le=queries.MAX_PAGE_SIZE)]
