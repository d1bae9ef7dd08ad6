"""Real crisis texts (CrisisLex T26, affected-individuals subset) round-trip unchanged
through publish_report and are shown escaped. Skips when the data folder is absent."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from accounts_helpers import member_of
from fastapi.testclient import TestClient
from markupsafe import escape

pytestmark = pytest.mark.realdata

REPO = Path(__file__).resolve().parents[2]


def crisis_dir() -> Path:
    base = Path(os.environ.get("REAL_DATA_DIR", REPO.parent / "shared" / "data"))
    return base / "crisis" / "crisislex_t26"


def crisis_texts(limit: int) -> list[tuple[str, str]]:
    folder = crisis_dir()
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        pytest.skip(f"real crisis texts not found under {folder} (set REAL_DATA_DIR)")
    texts: list[tuple[str, str]] = []
    for path in files:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            next(reader)
            for row in reader:
                if len(row) >= 3 and row[1].strip():
                    texts.append((path.name.split("-tweets")[0], row[1]))
                    break
        if len(texts) >= limit:
            break
    return texts


def test_real_crisis_texts_round_trip_escaped(web: TestClient, incident_id: str) -> None:
    texts = crisis_texts(limit=12)
    assert len(texts) >= 5
    for event, text in texts:
        relay = f"Public post relay ({event})"  # published by a reporter of that relay
        created = member_of(web.app, relay).post(
            "/api/reports",
            json={
                "incident_id": incident_id,
                "source": relay,
                "summary": text[:80],
                "original_text": text,
                "person": {"name": f"Unnamed person {event}"},
                "status": "seen",
                "references": [f"CrisisLex T26 {event}"],
            },
        )
        assert created.status_code == 201, created.text
        report = web.get(f"/api/reports/{created.json()['id']}").json()
        assert report["original_text"] == text
        page = web.get(f"/reports/{report['id']}").text
        assert str(escape(text)) in page
