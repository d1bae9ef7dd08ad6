"""Step 3: the content fingerprint of one investigation.

It covers, as canonical JSON hashed by ``modelgate.fingerprint``:

- the chosen report's source name, excerpt (original text), reported time and references;
- the same four fields of every incident report whose source is on the menu (the reports
  a relay could be compared with), in a stable order;
- the menu itself, the model id and the prompt version.

Database ids are never part of it, so re-seeding the same evidence after a reset gives the
same fingerprint, and a saved run is found again by content alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from modelgate.fingerprint import canonical_json, fingerprint
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.menu import Menu

FINGERPRINT_KIND = "trace_investigation"


def content_fingerprint(
    chosen: ReportEvidence,
    menu: Menu,
    incident_reports: Iterable[ReportEvidence],
    *,
    model: str,
    prompt_version: str,
) -> str:
    menu_names = set(menu.names)
    candidates = [r.content() for r in incident_reports if r.source in menu_names]
    candidates.sort(key=canonical_json)
    return fingerprint(
        {
            "report": chosen.content(),
            "menu": list(menu.names),
            "menu_reports": candidates,
            "model": model,
            "prompt_version": prompt_version,
        },
        FINGERPRINT_KIND,
    )
