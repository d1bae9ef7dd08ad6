"""Trace's languages (issue 42): the catalogues, the request's language, and locale formats.

- :data:`LANGUAGES`: English (the source), Nepali, Spanish and Arabic (right to left).
- :func:`translations`: a language's catalogue, a :class:`gettext.NullTranslations`, read
  from ``trace_app/locale/<lang>/LC_MESSAGES/messages.po`` (the ``.po`` file is the one
  source: it is compiled in memory at first use, so no ``.mo`` file can go stale; ADR 0170).
- :func:`negotiate`: the language for a request, from ``?lang=``, the ``trace_lang``
  cookie, the account's preference and ``Accept-Language``, else English.
- :func:`gettext` (``_``), :func:`ngettext` and :func:`pgettext` translate into the
  *current* language (a context variable the web layer sets per request; English
  elsewhere: the CLI stays in English). :func:`lazy_gettext` is for module-level words.
- :func:`format_datetime`, :func:`format_number`: Babel's formats of the language.

This package imports nothing of Trace, so any layer may use it.
"""

from __future__ import annotations

import gettext as _gettext
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from io import BytesIO
from typing import Any

from babel.support import LazyProxy

DEFAULT_LANGUAGE = "en"
# each language by its own name, as the language menu shows it
LANGUAGES: dict[str, str] = {
    "en": "English",
    "ne": "नेपाली",
    "es": "Español",
    "ar": "العربية",
}
RIGHT_TO_LEFT = frozenset({"ar"})
COOKIE = "trace_lang"
QUERY = "lang"
DOMAIN = "messages"

_current: ContextVar[str] = ContextVar("trace_language", default=DEFAULT_LANGUAGE)


def locale_dir() -> Any:
    return resources.files("trace_app").joinpath("locale")


def po_path(lang: str) -> Any:
    return locale_dir().joinpath(lang, "LC_MESSAGES", f"{DOMAIN}.po")


def supported(lang: str | None) -> str | None:
    """``lang`` when Trace speaks it (``"ne"``, ``"es-MX"`` -> ``"es"``), else None."""
    if not lang:
        return None
    base = lang.strip().replace("_", "-").split("-", 1)[0].lower()
    return base if base in LANGUAGES else None


def direction(lang: str) -> str:
    """``rtl`` or ``ltr``, for ``<html dir=..>``."""
    return "rtl" if lang in RIGHT_TO_LEFT else "ltr"


@lru_cache(maxsize=len(LANGUAGES))
def translations(lang: str) -> _gettext.NullTranslations:
    """The catalogue of ``lang``; English (and a language without a catalogue) is the
    source text itself. Compiled from the ``.po`` file once per process."""
    lang = supported(lang) or DEFAULT_LANGUAGE
    if lang == DEFAULT_LANGUAGE:
        return _gettext.NullTranslations()
    source = po_path(lang)
    if not source.is_file():
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with source.open("rb") as handle:
        catalog = read_po(handle, locale=lang, domain=DOMAIN)
    buffer = BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def parse_accept_language(header: str | None) -> list[str]:
    """The languages of an ``Accept-Language`` header, best first (q=0 dropped)."""
    if not header:
        return []
    weighted: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")[:20]):
        name, _, params = part.strip().partition(";")
        quality = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                quality = float(params[2:])
            except ValueError:
                quality = 0.0
        if name and quality > 0:
            weighted.append((-quality, index, name.strip()))
    return [name for _q, _i, name in sorted(weighted)]


def negotiate(
    accept_language: str | None = None,
    cookie: str | None = None,
    account_pref: str | None = None,
    query: str | None = None,
) -> str:
    """The request's language: ``?lang=`` first, then the cookie it set, then the signed-in
    account's preference, then the first language of ``Accept-Language`` Trace speaks,
    else English."""
    for chosen in (query, cookie, account_pref):
        found = supported(chosen)
        if found:
            return found
    for name in parse_accept_language(accept_language):
        found = supported(name)
        if found:
            return found
    return DEFAULT_LANGUAGE


# --- the current language -----------------------------------------------------------


def current_language() -> str:
    return _current.get()


def set_language(lang: str) -> None:
    """Make ``lang`` the current language of this context (a request)."""
    _current.set(supported(lang) or DEFAULT_LANGUAGE)


@contextmanager
def language(lang: str) -> Iterator[None]:
    """Translate into ``lang`` within the block (a mail to an enquirer, a test)."""
    token = _current.set(supported(lang) or DEFAULT_LANGUAGE)
    try:
        yield
    finally:
        _current.reset(token)


def gettext(message: str) -> str:
    return translations(_current.get()).gettext(message)


_ = gettext


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(_current.get()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    return translations(_current.get()).pgettext(context, message)


def lazy_gettext(message: str) -> LazyProxy:
    """``message`` translated each time it is used (module-level words)."""
    return LazyProxy(gettext, message, enable_cache=False)


def N_(message: str) -> str:
    """Marks a word for the catalogue without translating it here (translated where used)."""
    return message


def translate_in(lang: str, message: str) -> str:
    """``message`` in ``lang``, whatever the current language."""
    return translations(lang).gettext(message)


from trace_app.i18n.formats import format_date, format_datetime, format_number  # noqa: E402

__all__ = [
    "COOKIE",
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "N_",
    "QUERY",
    "RIGHT_TO_LEFT",
    "current_language",
    "direction",
    "format_date",
    "format_datetime",
    "format_number",
    "gettext",
    "language",
    "lazy_gettext",
    "negotiate",
    "ngettext",
    "pgettext",
    "set_language",
    "supported",
    "translate_in",
    "translations",
]
