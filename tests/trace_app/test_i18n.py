"""Trace in Nepali, Spanish and Arabic (issue 42): the language is chosen per request, every
page renders in every language with no English interface word left, Arabic is right to
left, locale formats, and the catalogue check.

One app (the seeded demo on SQLite) serves the whole module: the pages are rendered once
per language and the checks read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import pytest
from sqlalchemy import JSON, String, Text, select

from trace_app import glossary, i18n
from trace_app.store.account_models import AuditEvent, User
from trace_app.store.models import Alert, Base, Incident, Person, Report

LANGS = ("en", "ne", "es", "ar")
ROOT = Path(__file__).resolve().parents[2]


# --- the language API -------------------------------------------------------------------


def test_negotiate_follows_query_cookie_account_then_accept_language() -> None:
    assert i18n.negotiate("ne-NP,ne;q=0.9,en;q=0.8") == "ne"
    assert i18n.negotiate("fr-FR, es;q=0.5, ar;q=0.7") == "ar"
    assert i18n.negotiate("fr, de") == "en"
    assert i18n.negotiate(None) == "en"
    assert i18n.negotiate("ar", cookie="es") == "es"
    assert i18n.negotiate("ar", cookie=None, account_pref="ne") == "ne"
    assert i18n.negotiate("ar", cookie="es", account_pref="ne", query="en") == "en"
    assert i18n.negotiate("ar", cookie="xx", query="zz") == "ar"  # unknown codes are ignored
    assert i18n.negotiate("es;q=0, ne") == "ne"  # q=0 means "not this one"


def test_words_follow_the_current_language_with_plurals() -> None:
    assert i18n.gettext("Sign in") == "Sign in"
    with i18n.language("es"):
        assert i18n.gettext("Sign in") == "Entrar"
        assert i18n.ngettext("%(num)d person", "%(num)d people", 1) % {"num": 1} == "1 persona"
        assert i18n.ngettext("%(num)d person", "%(num)d people", 3) % {"num": 3} == "3 personas"
        # the glossary's terms read in the current language
        assert glossary.phrase("claim_status", "missing") == "Desaparecido"
        assert "{name}" in glossary.PUBLISHED["new_person"]
    with i18n.language("ar"):
        assert i18n.gettext("Missing") == "مفقود"
        # Arabic has six plural forms: two reads differently from eleven
        assert i18n.ngettext("%(num)d report", "%(num)d reports", 11) != i18n.ngettext(
            "%(num)d report", "%(num)d reports", 2
        )
    assert i18n.gettext("Missing") == "Missing"  # back to English outside the block


def test_dates_and_numbers_in_the_languages_conventions() -> None:
    value = datetime(2026, 12, 2, 8, 20, tzinfo=UTC)
    now = datetime(2026, 12, 4, tzinfo=UTC)
    kathmandu = "Asia/Kathmandu"
    assert i18n.format_datetime(value, "es", kathmandu, now=now) == "2 dic, 14:05 (Kathmandu)"
    assert "डिसेम्बर" in i18n.format_datetime(value, "ne", kathmandu, now=now)
    assert "ديسمبر" in i18n.format_datetime(value, "ar", kathmandu, now=now)
    assert "2015" in i18n.format_datetime(value.replace(year=2015), "es", kathmandu, now=now)
    assert i18n.format_number(20000, "es") == "20.000"
    assert i18n.format_number(20000, "en") == "20,000"


def test_the_catalogues_are_complete_and_current() -> None:
    """The check `make lint` runs: extraction up to date, no bare template text, nothing
    untranslated or fuzzy, every placeholder kept."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_catalogue
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert check_catalogue.problems() == []
    counts = check_catalogue.counts()
    assert all(untranslated == 0 for _total, untranslated in counts.values())
    assert len({total for total, _u in counts.values()}) == 1
    # and the heuristic sees a bare word when there is one
    assert check_catalogue.bare_text("<p>Publish a report</p>") == ["Publish a report"]
    assert check_catalogue.bare_text('<p>{{ _("Publish a report") }}</p>') == []
    assert check_catalogue.bare_text('<input placeholder="any script">') == ["any script"]


def test_the_catalogue_check_fails_on_an_untranslated_or_fuzzy_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check can fail: a copy of the catalogues with one entry emptied, one marked
    fuzzy and one that lost its placeholder."""
    import shutil
    import sys

    from babel.messages.pofile import read_po, write_po

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_catalogue
    finally:
        sys.path.remove(str(ROOT / "tools"))
    locale = tmp_path / "locale"
    shutil.copytree(check_catalogue.LOCALE, locale)
    monkeypatch.setattr(check_catalogue, "LOCALE", locale)
    path = locale / "ne" / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as handle:
        catalog = read_po(handle, locale="ne")
    catalog["Sign in"].string = ""
    catalog["Menu"].flags.add("fuzzy")
    catalog["Close the alert for %(name)s?"].string = "सतर्कता बन्द गर्ने?"
    with path.open("wb") as handle:
        write_po(handle, catalog)
    found = check_catalogue.problems()
    assert "ne: untranslated: 'Sign in'" in found
    assert "ne: fuzzy: 'Menu'" in found
    assert any("placeholder ['name'] missing" in p for p in found)
    assert check_catalogue.main([]) == 1


# --- every page in every language -------------------------------------------------------


class _Text(HTMLParser):
    """The words a person reads on a page: text nodes and the attributes read aloud or
    shown (title, placeholder, aria-label, alt), without <code>, <script>, <style>,
    and what is marked translate="no" (data)."""

    SKIP: ClassVar[frozenset[str]] = frozenset({"code", "script", "style"})

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # translate="no": HTML's own mark for words that are data (place names, codes)
        if tag in self.SKIP or ("translate", "no") in attrs:
            self._skip.append(tag)
        for name, value in attrs:
            if name in ("title", "placeholder", "aria-label", "alt") and value:
                if not self._skip:
                    self.parts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if self._skip and self._skip[-1] == tag:
            self._skip.pop()

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def page_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


_ASCII_WORD = re.compile(r"(?<![^\W\d_])[A-Za-z][A-Za-z'’_.-]*[A-Za-z](?![^\W\d_])")
# names, codes and examples that are data in any language
ALLOWED = {
    "Trace", "PFIF", "CSV", "UTF", "API", "Person", "Finder", "English", "Español",
    "UTC", "Sindhupalchok", "Landslide", "Camp", "Registration", "Desk",
    "full_name", "age", "status", "last_known_location", "phone", "email",
    "report.publish", "user", "trace", "create", "Tokens", "URL",
}  # fmt: skip
_URL = re.compile(r"\w+://\S+")
_CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # TRACE_SMTP_URL: a setting's name


def english_words(text: str, data_words: set[str]) -> list[str]:
    """The Latin-script words of a Nepali or Arabic page that are neither data nor names."""
    return sorted(
        {
            w
            for w in _ASCII_WORD.findall(_URL.sub(" ", text))
            if w not in ALLOWED
            and w.lower() not in data_words
            and len(w) > 2
            and not _CODE.fullmatch(w)
        }
    )


# columns that hold codes the pages must say in words (a status, a role), never data
CODE_COLUMNS = {
    "status", "previous_status", "role", "action", "outcome", "kind", "state", "decision",
    "scope", "channel", "reason", "close_reason", "priority", "mode", "attribution",
    "support", "purpose", "language", "time_zone", "object_type", "code", "touched",
    "before", "after", "payload", "scopes", "response", "result",
}  # fmt: skip


def _is_code(column: str) -> bool:
    return column in CODE_COLUMNS or column == "id" or column.endswith("_id")


def _data_words(db: Any) -> set[str]:
    """Every word stored in the database's text columns: names, report texts,
    organisations, notes (data is never translated)."""
    words: set[str] = set()
    with db.sessions() as session:
        for table in Base.metadata.sorted_tables:
            columns = [
                c
                for c in table.columns
                if isinstance(c.type, (String, Text, JSON)) and not _is_code(c.name)
            ]
            if not columns:
                continue
            for row in session.execute(select(*columns)):
                for value in row:
                    if value is not None:
                        words.update(w.lower() for w in _ASCII_WORD.findall(str(value)))
    return words


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Every page of the seeded demo, in every language, by one admin and a signed-out
    visitor; plus the data words."""
    from accounts_helpers import app_database, client_for, signed_in

    from trace_app.settings import TraceSettings
    from trace_app.store.db import make_engine, migrate
    from trace_app.web.app import create_app

    home = tmp_path_factory.mktemp("i18n") / "home"
    home.mkdir()
    engine = make_engine(f"sqlite:///{home / 'trace.db'}")
    migrate(engine)
    engine.dispose()
    settings = TraceSettings(
        home=home,
        database_url=f"sqlite:///{home / 'trace.db'}",
        demo=True,
        recorded_investigations=home / "no-recorded-runs.json",
    )
    app = create_app(settings)
    db = app_database(app)
    with db.sessions() as session:
        incident = session.scalars(
            select(Incident).where(Incident.name == "Flood Relief Demo")
        ).one()
        person = session.scalars(
            select(Person).where(Person.incident_id == incident.id).order_by(Person.name)
        ).first()
        report = session.scalars(select(Report).where(Report.incident_id == incident.id)).first()
        alert = session.scalars(select(Alert).where(Alert.incident_id == incident.id)).first()
        assert person and report and alert
        ids = {"i": incident.id, "p": person.id, "r": report.id, "a": alert.id}
    pages = [
        "/",
        "/account",
        f"/publish?incident_id={ids['i']}",
        f"/incidents/{ids['i']}/people",
        f"/incidents/{ids['i']}/people?q=Sunitta",
        f"/people/{ids['p']}",
        f"/reports/{ids['r']}",
        f"/incidents/{ids['i']}/reports",
        f"/incidents/{ids['i']}/reviews",
        f"/incidents/{ids['i']}/duplicates",
        "/import",
        "/export",
        "/audit",
        "/incidents/new",
        f"/incidents/{ids['i']}/members",
        f"/incidents/{ids['i']}/time-zone",
        f"/alerts/{ids['a']}/close",
        "/demo/reset",
        # issue 41's pages
        f"/incidents/{ids['i']}/inquiries/new",
        f"/people/{ids['p']}/inquiries/new",
        f"/people/{ids['p']}/inquiries",
        f"/incidents/{ids['i']}/follow-ups",
        f"/incidents/{ids['i']}/deliveries",
        f"/incidents/{ids['i']}/webhooks",
        "/no-such-page",
    ]
    out: dict[str, Any] = {"pages": {}, "ids": ids, "app": app}
    # a name that is no role's code: the roles are words to translate, not data
    with signed_in(app, name="asha.lamichhane") as admin, client_for(app) as visitor:
        for lang in LANGS:
            got = {}
            for path in pages:
                sep = "&" if "?" in path else "?"
                response = admin.get(f"{path}{sep}lang={lang}")
                assert response.status_code in (200, 404), (path, response.status_code)
                got[path] = response.text
            got["/login"] = visitor.get(f"/login?lang={lang}").text
            out["pages"][lang] = got
        # a membership's role is a code the pages say in words: never data
        out["data_words"] = _data_words(db) - {
            "viewer",
            "reporter",
            "reviewer",
            "coordinator",
            "admin",
        }
        out["admin"] = admin
        yield out


@pytest.mark.parametrize("lang", ["ne", "ar"])
def test_every_page_leaves_no_english_interface_word(rendered: dict[str, Any], lang: str) -> None:
    data_words = rendered["data_words"]
    left = {}
    for path, html in rendered["pages"][lang].items():
        found = english_words(page_text(html), data_words)
        if found:
            left[path] = found
    if left:
        pytest.fail("\n".join(f"{path}: {words}" for path, words in left.items()))


def test_every_page_in_spanish_holds_no_english_sentence(rendered: dict[str, Any]) -> None:
    """Spanish shares the Latin script, so the check is by sentence: no message of the
    catalogue of three words or more appears untranslated."""
    sentences = [
        str(m)
        for m in _catalogue_ids()
        if len(str(m).split()) >= 3
        and "%" not in str(m)
        and "{" not in str(m)
        and "<" not in str(m)
    ]
    left = {}
    for path, html in rendered["pages"]["es"].items():
        text = " ".join(page_text(html).split())
        found = [s for s in sentences if s in text]
        if found:
            left[path] = found
    assert left == {}


def _catalogue_ids() -> list[str]:
    from babel.messages.pofile import read_po

    path = ROOT / "src/trace_app/locale/es/LC_MESSAGES/messages.po"
    with path.open("rb") as handle:
        catalog = read_po(handle)
    return [m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id]


def test_the_detector_sees_an_english_word_left() -> None:
    text = page_text("<p>हराएको <b>Publish</b> <code>NEEDS_REVIEW</code> Sunitta</p>")
    assert english_words(text, {"sunitta"}) == ["Publish"]


@pytest.mark.parametrize("lang", LANGS)
def test_each_page_says_its_language_direction_and_offers_the_menu(
    rendered: dict[str, Any], lang: str
) -> None:
    direction = "rtl" if lang == "ar" else "ltr"
    for path, html in rendered["pages"][lang].items():
        assert f'<html lang="{lang}" dir="{direction}">' in html, path
        assert 'class="languages"' in html and "नेपाली" in html and "العربية" in html, path
    # "back" points to where a line starts: the right in Arabic
    report = rendered["pages"][lang][f"/reports/{rendered['ids']['r']}"]
    assert ('">→ ' if lang == "ar" else '">← ') in report


def test_data_is_never_translated(rendered: dict[str, Any]) -> None:
    """A person's name and a report's text read the same in every language."""
    report_page = f"/reports/{rendered['ids']['r']}"
    original = re.search(
        r'id="original-text">(.*?)</blockquote>', rendered["pages"]["en"][report_page], re.S
    )
    assert original
    for lang in ("ne", "es", "ar"):
        assert original.group(1) in rendered["pages"][lang][report_page]


# --- choosing the language --------------------------------------------------------------


def test_lang_sets_a_cookie_and_the_accounts_preference(rendered: dict[str, Any]) -> None:
    from accounts_helpers import app_database, client_for, sign_in

    app = rendered["app"]
    admin = rendered["admin"]
    # the admin's last ?lang= (the fixture's last language) is its preference
    db = app_database(app)
    with db.sessions() as session:
        events = session.scalars(
            select(AuditEvent).where(AuditEvent.action == "account.language")
        ).all()
        assert events, "a changed preference leaves its audit row"
        user = session.get(User, events[-1].object_id)
        assert user is not None and user.language == "ar"
        name = user.name

    response = admin.get("/?lang=ne")
    assert "trace_lang=ne" in response.headers.get("set-cookie", "")
    assert '<html lang="ne" dir="ltr">' in admin.get("/").text  # the cookie keeps it

    # a new browser: no cookie, no ?lang; the account's preference decides once signed in
    with client_for(app, headers={"accept-language": "es"}) as fresh:
        assert '<html lang="es"' in fresh.get("/login").text  # Accept-Language, signed out
        assert sign_in(fresh, name).status_code == 303
        home = fresh.get("/")
        assert '<html lang="ne" dir="ltr">' in home.text
        assert "trace_lang=ne" in home.headers.get("set-cookie", "")


def test_english_is_the_fallback_and_the_api_message_follows_accept_language(
    rendered: dict[str, Any],
) -> None:
    from accounts_helpers import client_for

    app = rendered["app"]
    with client_for(app, headers={"accept-language": "fr, de"}) as visitor:
        assert '<html lang="en" dir="ltr">' in visitor.get("/login").text
        # the API's message follows Accept-Language; its code stays English
        for lang, words in (("es", "Entre primero"), ("ar", "سجّل الدخول أولًا"), ("en", "Sign in")):
            answer = visitor.get("/api/incidents", headers={"accept-language": lang})
            assert answer.status_code == 401
            assert answer.json()["detail"].startswith(words)
            assert answer.json()["code"] == "not_signed_in"
