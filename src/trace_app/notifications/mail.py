"""The mail an enquirer gets (issue 41): a confirmation first, then news of the person.

Every message carries a one-click unsubscribe link in its body and in the
``List-Unsubscribe`` / ``List-Unsubscribe-Post: List-Unsubscribe=One-Click`` headers
(RFC 8058), and a ``Message-ID`` made from the delivery's id, so a message sent again
after a lost answer is recognised as the same message. A news message names the person,
says the new status in the glossary's plain words, the date in the incident's time zone,
and who to contact. A death is never sent by mail (:mod:`trace_app.notifications.fan_out`
makes no mail delivery for it), and this module refuses to write one.

The words go through one catalogue function, :func:`translator`: the enquirer's
language (issue 42), English where a translation is missing; the date by
:func:`trace_app.i18n.formats.format_datetime`.
"""

from __future__ import annotations

import email.policy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import formatdate

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app import glossary, i18n
from trace_app.i18n.formats import format_datetime
from trace_app.notifications import links
from trace_app.settings import TraceSettings
from trace_app.store.account_models import Membership
from trace_app.store.models import Incident, Organization
from trace_app.store.notification_models import Delivery, EventKind, Inquiry, LinkPurpose

DECEASED = "deceased"
# Where a link points when neither TRACE_PUBLIC_URL nor `trace serve` gave a base.
FALLBACK_PUBLIC_URL = "http://127.0.0.1:8000"
_SPACES = re.compile(r"\s+")
# Lines up to RFC 5322's hard limit: a long List-Unsubscribe URL stays one plain header
# (the default 78 would encode it as RFC 2047 words, which no mail client follows).
MAIL_POLICY = email.policy.default.clone(max_line_length=998)


class DeathByMailError(ValueError):
    """A news message about a death was asked for: Trace never writes one."""


def translator(language: str) -> Callable[[str], str]:
    """``gettext`` for ``language`` from Trace's catalogue (:mod:`trace_app.i18n`, issue
    42); English where a language or a translation is missing."""
    return i18n.translations(i18n.supported(language) or "en").gettext


def one_line(text: str, limit: int = 120) -> str:
    """A header-safe piece of text: one line, no control characters, at most ``limit``."""
    cleaned = _SPACES.sub(" ", "".join(c if c.isprintable() else " " for c in text)).strip()
    return cleaned[:limit]


@dataclass(frozen=True, slots=True)
class Letter:
    """What a message says, before it is an EmailMessage."""

    subject: str
    body: str


@dataclass(frozen=True, slots=True)
class News:
    """One event's facts, as the outbox payload holds them."""

    kind: str
    person_name: str
    status: str
    at: datetime


def confirmation_letter(
    _: Callable[[str], str],
    *,
    enquirer: str,
    person: str,
    contact: str,
    reference: str,
    confirm_url: str,
    unsubscribe_url: str,
) -> Letter:
    subject = _("Please confirm: news about {person}").format(person=person)
    body = "\n".join(
        [
            _("Hello {enquirer},").format(enquirer=enquirer),
            "",
            _(
                "You asked {contact} to tell you when there is news about {person}. Before "
                "anything more is sent, please confirm that this is your email address: open "
                "the link below and press the button on the page."
            ).format(contact=contact, person=person),
            "",
            confirm_url,
            "",
            _("If you did not ask for this, ignore this message: no more mail will come."),
            "",
            _("To get no mail at all about this request, open this link: {url}").format(
                url=unsubscribe_url
            ),
            _("Your reference: {reference}").format(reference=reference),
            "",
        ]
    )
    return Letter(subject, body)


def news_letter(
    _: Callable[[str], str],
    news: News,
    *,
    enquirer: str,
    contact: str,
    reference: str,
    when: str,
    unsubscribe_url: str,
) -> Letter:
    if news.status == DECEASED:
        raise DeathByMailError("a death is told in person, never by mail")
    term = glossary.CLAIM_STATUS.get(news.status)
    phrase = _(term.source_phrase) if term else news.status
    sentence = _(term.source_sentence) if term else ""
    lines = [
        _("Hello {enquirer},").format(enquirer=enquirer),
        "",
        _("There is news about {person}, whom you asked about.").format(person=news.person_name),
        "",
        _("Status now: {phrase}. {sentence}").format(phrase=phrase, sentence=sentence).strip(),
    ]
    if news.kind == EventKind.ALERT_OPENED.value:
        lines.append(_(glossary.ALERT_STATE["open"].source_sentence))
    elif news.kind == EventKind.ALERT_CLOSED.value:
        lines.append(_(glossary.ALERT_STATE["closed"].source_sentence))
    lines += [
        _("Date: {when}").format(when=when),
        "",
        _("To ask about this, contact {contact} and give your reference: {reference}").format(
            contact=contact, reference=reference
        ),
        "",
        _("To stop these messages, open this link and press the button: {url}").format(
            url=unsubscribe_url
        ),
        "",
    ]
    subject = _("News about {person}: {phrase}").format(person=news.person_name, phrase=phrase)
    return Letter(subject, "\n".join(lines))


def message_id(delivery_id: str, mail_from: str) -> str:
    """``<delivery id@sender's domain>``: the same for every attempt of one delivery."""
    domain = mail_from.rsplit("@", 1)[-1].strip(" >") if "@" in mail_from else "trace.invalid"
    return f"<{delivery_id}@{domain or 'trace.invalid'}>"


def envelope(
    letter: Letter,
    *,
    to: str,
    settings: TraceSettings,
    delivery_id: str,
    unsubscribe_url: str,
    language: str,
) -> EmailMessage:
    message = EmailMessage(policy=MAIL_POLICY)
    message["From"] = settings.mail_from
    message["To"] = to
    message["Subject"] = one_line(letter.subject, 200)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = message_id(delivery_id, settings.mail_from)
    message["List-Unsubscribe"] = f"<{unsubscribe_url}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(letter.body)  # (drops any Content-* header set before it)
    message["Content-Language"] = one_line(language, 20) or "en"
    return message


def contact_of(
    session: Session, inquiry: Inquiry, incident: Incident, _: Callable[[str], str]
) -> str:
    """Who the enquirer asks: the organisation of the desk that took the request, else the
    incident's help desk, in words."""
    if inquiry.created_by:
        name = session.scalar(
            select(Organization.name)
            .join(Membership, Membership.organization_id == Organization.id)
            .where(
                Membership.user_id == inquiry.created_by,
                Membership.scope.in_([incident.id, "*"]),
            )
            .limit(1)
        )
        if name:
            return one_line(name)
    return _("the help desk of {incident}").format(incident=one_line(incident.name))


def format_when(at: datetime, zone_name: str, language: str = "en") -> str:
    """The day, the clock and the zone's city, as a reader of ``language`` says them."""
    return format_datetime(at, i18n.supported(language) or "en", zone_name)


def parse_at(value: object) -> datetime:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
    return datetime.now().astimezone()


def compose(
    session: Session,
    settings: TraceSettings,
    delivery: Delivery,
    kind: str,
    payload_text: str,
    inquiry: Inquiry,
) -> EmailMessage:
    """The message of one email delivery; issues its links' tokens in ``session`` (the
    caller commits). ``inquiry`` has an address and has not unsubscribed."""
    assert inquiry.email
    payload = json.loads(payload_text)
    incident = session.get(Incident, inquiry.incident_id)
    assert incident is not None
    _ = translator(inquiry.language or "en")
    base = settings.public_url or FALLBACK_PUBLIC_URL
    unsubscribe = links.link_url(
        base, LinkPurpose.UNSUBSCRIBE, links.issue(session, inquiry.id, LinkPurpose.UNSUBSCRIBE)
    )
    enquirer = one_line(inquiry.enquirer_name or "") or _("there")
    person = one_line(str(payload.get("person_name") or "")) or _("the person you asked about")
    contact = contact_of(session, inquiry, incident, _)
    if kind == EventKind.INQUIRY_CREATED.value:
        confirm = links.link_url(
            base, LinkPurpose.CONFIRM, links.issue(session, inquiry.id, LinkPurpose.CONFIRM)
        )
        letter = confirmation_letter(
            _,
            enquirer=enquirer,
            person=person,
            contact=contact,
            reference=inquiry.id,
            confirm_url=confirm,
            unsubscribe_url=unsubscribe,
        )
    else:
        news = News(kind, person, str(payload.get("status") or ""), parse_at(payload.get("at")))
        letter = news_letter(
            _,
            news,
            enquirer=enquirer,
            contact=contact,
            reference=inquiry.id,
            when=format_when(news.at, incident.time_zone, inquiry.language or "en"),
            unsubscribe_url=unsubscribe,
        )
    return envelope(
        letter,
        to=inquiry.email,
        settings=settings,
        delivery_id=delivery.id,
        unsubscribe_url=unsubscribe,
        language=inquiry.language or "en",
    )
