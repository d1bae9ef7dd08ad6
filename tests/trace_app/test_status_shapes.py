"""Statuses are told apart by more than colour: each result status and mode on the card,
and each claim status badge, carries its own shape and its own words."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from trace_app import glossary
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.vocabulary import MODE_ICONS, STATUS_ICONS, Mode, Status
from trace_app.store.models import ClaimStatus
from trace_app.web.deps import STATUS_BADGE_ICONS, make_templates

CARD = make_templates().env.get_template("investigation/result.html")


def _card(status: Status, mode: Mode | None) -> str:
    result = InvestigationResult(
        report_id="rep_shape",
        status=status,
        reason="Because.",
        mode=mode,
        run_at=datetime(2026, 7, 15, tzinfo=UTC) if mode else None,
    )
    return CARD.render(investigation=result, csrf_token="t", review=None)


def _heading(html: str) -> tuple[str, str]:
    icon = re.search(r'class="status-icon" aria-hidden="true">([^<]+)<', html)
    word = re.search(r'class="investigation-status">([^<]+)<', html)
    assert icon and word
    return icon.group(1), word.group(1)


def test_every_result_status_has_its_own_shape_and_word() -> None:
    shown = {status: _heading(_card(status, None)) for status in Status}
    assert {status: icon for status, (icon, _) in shown.items()} == STATUS_ICONS
    assert len({icon for icon, _ in shown.values()}) == len(Status)
    assert [word for _, word in shown.values()] == [s.value for s in Status]


def test_every_mode_has_its_own_shape_and_words_on_the_card() -> None:
    badges = {}
    for mode in Mode:
        html = _card(Status.NEEDS_REVIEW, mode)
        found = re.search(
            r'class="mode-badge mode-(\w+)"[^>]*><span aria-hidden="true">([^<]+)</span> ([^<]+)<',
            html,
        )
        assert found, mode
        badges[mode] = (found.group(2), found.group(3))
        assert found.group(1) == mode.value.lower()
        # plain words on the card (the glossary's), the code only in the folded details
        assert mode.value not in found.group(3)
        assert found.group(3) == glossary.phrase("check_mode", mode.value).format(day="15 Jul")
    assert {m: icon for m, (icon, _) in badges.items()} == MODE_ICONS
    assert len({icon for icon, _ in badges.values()}) == len(Mode)


def test_claim_status_badges_differ_by_shape_and_word() -> None:
    names = [status.value for status in ClaimStatus] + ["closed"]
    shapes = [STATUS_BADGE_ICONS[name] for name in names]
    assert len(set(shapes)) == len(names)
    env = make_templates().env
    for name in names:
        html = env.from_string("{{ name|status_badge }}").render(name=name)
        table = "alert_state" if name == "closed" else "claim_status"
        words = glossary.phrase(table, name)
        assert f">{STATUS_BADGE_ICONS[name]}</span>{words}</span>" in html
        assert f'data-code="{name}"' in html
