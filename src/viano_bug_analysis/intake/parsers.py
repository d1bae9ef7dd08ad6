"""Parsers of foreign bug-report formats to :class:`IntakeDocument` (the native intake
is in :mod:`viano_bug_analysis.intake.native`; the list of formats in
:mod:`viano_bug_analysis.intake.formats`).

- ``github-issue``: a GitHub REST issue object (``user.login``, ``created_at``,
  ``comments`` as a count or as an embedded list), the InEx-Bug flavour (``author.username``)
  and ``gh issue view --json number,title,body,author,createdAt,labels,comments,url``.
- ``bugzilla``: a Bugzilla REST bug with ``comments`` (comment 0 is the description).
- ``markdown``: a Markdown report with the usual headings.
"""

from __future__ import annotations

import re
from typing import Any

from viano_bug_analysis.errors import IntakeError
from viano_bug_analysis.intake.body import apply_body
from viano_bug_analysis.intake.model import (
    EntityHint,
    Fact,
    IntakeDocument,
    Item,
    Reference,
    Source,
    json_pointer,
)
from viano_bug_analysis.intake.raw import load_json_object, safe_identity

_GITHUB_URL = re.compile(
    r"github\.com/(?P<owner>[^/\s]+)/(?P<repo>[^/\s]+)/(?:issues|pull)/(?P<n>\d+)"
)
_MAINTAINER_ASSOC = {"OWNER", "MEMBER", "COLLABORATOR"}


def _str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _login(person: Any) -> str | None:
    if isinstance(person, dict):
        for key in ("login", "username", "name", "email"):
            value = person.get(key)
            if isinstance(value, str) and value:
                return value
    if isinstance(person, str):
        return person
    return None


# -- GitHub -----------------------------------------------------------------------------


def parse_github_issue(data: bytes, member: str) -> IntakeDocument:
    obj = load_json_object(data, member)
    title, body = obj.get("title"), obj.get("body")
    if not isinstance(title, str) or not (body is None or isinstance(body, str)):
        raise IntakeError(
            f"{member}: a GitHub issue needs a string 'title' and a string or null 'body'",
            code="intake.invalid",
            member=member,
        )
    doc = IntakeDocument(format="github-issue", member=member)
    reporter = _login(obj.get("user")) or _login(obj.get("author"))
    created = _str(obj, "created_at") or _str(obj, "createdAt")
    base = Source(member, None, reporter, created, "original", "reporter")

    def at(*parts: str | int) -> Source:
        return Source(member, json_pointer(*parts), reporter, created, "original", "reporter")

    doc.titles.append(Item(title, at("title")))
    apply_body(doc, body or "", at("body"))
    if not (body or "").strip():
        doc.observations.append(Item("", at("body"), {"section": "empty"}))
    url = _str(obj, "html_url") or _str(obj, "url") or ""
    m = _GITHUB_URL.search(url)
    owner = m.group("owner") if m else _str(obj, "owner")
    repo = m.group("repo") if m else _str(obj, "repo")
    number = obj.get("number")
    if owner and repo:
        doc.entities.append(EntityHint("component", f"{owner}/{repo}", at("html_url")))
    if url:
        doc.references.append(
            Reference("url", at("html_url" if "html_url" in obj else "url"), "issue page", uri=url)
        )
    labels = obj.get("labels")
    if isinstance(labels, list):
        for i, label in enumerate(labels):
            name = label.get("name") if isinstance(label, dict) else label
            if isinstance(name, str):
                doc.facts.append(Fact("label", at("labels", i), value=name))
    comments = obj.get("comments")
    if isinstance(comments, list):
        for i, comment in enumerate(comments):
            if not isinstance(comment, dict):
                raise IntakeError(f"{member}: comment {i} is not an object", code="intake.invalid")
            text = comment.get("body")
            author = _login(comment.get("author")) or _login(comment.get("user"))
            stamp = _str(comment, "created_at") or _str(comment, "createdAt")
            assoc = comment.get("author_association") or comment.get("authorAssociation")
            if isinstance(comment.get("author"), dict):
                assoc = assoc or comment["author"].get("author_association")
            role = (
                "reporter"
                if author is not None and author == reporter
                else "maintainer"
                if assoc in _MAINTAINER_ASSOC
                else "commenter"
            )
            doc.comments.append(
                Item(
                    text if isinstance(text, str) else "",
                    Source(
                        member, json_pointer("comments", i, "body"), author, stamp, "original", role
                    ),
                )
            )
    doc.identity = {
        "case_id": safe_identity(
            f"gh-{owner}-{repo}-{number}"
            if owner and repo and number is not None
            else f"gh-{number if number is not None else 'issue'}"
        )
    }
    del base
    return doc


# -- Bugzilla ---------------------------------------------------------------------------

_BUGZILLA_FACTS = (
    "product",
    "component",
    "version",
    "platform",
    "op_sys",
    "severity",
    "priority",
    "type",
    "status",
    "resolution",
    "cf_has_str",
    "cf_crash_signature",
    "url",
)


def parse_bugzilla(data: bytes, member: str) -> IntakeDocument:
    obj = load_json_object(data, member)
    summary, bug_id = obj.get("summary"), obj.get("id")
    comments = obj.get("comments", [])
    if not isinstance(summary, str) or not isinstance(comments, list):
        raise IntakeError(
            f"{member}: a Bugzilla bug needs a string 'summary' and a 'comments' list",
            code="intake.invalid",
            member=member,
        )
    reporter = _str(obj, "creator")
    created = _str(obj, "creation_time")
    doc = IntakeDocument(format="bugzilla", member=member)

    def at(*parts: str | int) -> Source:
        return Source(member, json_pointer(*parts), reporter, created, "original", "reporter")

    doc.titles.append(Item(summary, at("summary")))
    for key in _BUGZILLA_FACTS:
        value = obj.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            if str(value) in ("---", ""):
                continue
            doc.facts.append(Fact(key, at(key), value=str(value)))
    product, component = _str(obj, "product"), _str(obj, "component")
    if product and component:
        doc.entities.append(EntityHint("component", f"{product}::{component}", at("component")))
    version = _str(obj, "version")
    if version and version not in ("unspecified", "Trunk", "---"):
        doc.entities.append(EntityHint("version", version, at("version")))
    keywords = obj.get("keywords")
    if isinstance(keywords, list):
        for i, kw in enumerate(keywords):
            if isinstance(kw, str):
                doc.facts.append(Fact("keyword", at("keywords", i), value=kw))
    description_done = False
    for i, comment in enumerate(comments):
        if not isinstance(comment, dict):
            raise IntakeError(f"{member}: comment {i} is not an object", code="intake.invalid")
        text = comment.get("text")
        text = text if isinstance(text, str) else ""
        author = _str(comment, "author") or _str(comment, "creator")
        stamp = _str(comment, "creation_time") or _str(comment, "time")
        if not description_done and comment.get("count", i) == 0:
            description_done = True
            src = Source(
                member, json_pointer("comments", i, "text"), author, stamp, "original", "reporter"
            )
            apply_body(doc, text, src)
            if not text.strip():
                doc.observations.append(Item("", src, {"section": "empty"}))
            continue
        role = "reporter" if author is not None and author == reporter else "commenter"
        doc.comments.append(
            Item(
                text,
                Source(
                    member, json_pointer("comments", i, "text"), author, stamp, "original", role
                ),
            )
        )
    attachments = obj.get("attachments")
    if isinstance(attachments, list):
        for i, att in enumerate(attachments):
            if not isinstance(att, dict):
                continue
            src = Source(
                member,
                json_pointer("attachments", i),
                _str(att, "creator"),
                _str(att, "creation_time"),
                "original",
                "reporter",
            )
            is_patch = bool(att.get("is_patch"))
            size = att.get("size")
            ref = Reference(
                "source" if is_patch else "attachment",
                src,
                description=_str(att, "description") or _str(att, "file_name") or "",
                uri=f"bugzilla-attachment:{att.get('id')}",
                size=size if isinstance(size, int) else None,
                media_type=_str(att, "content_type"),
                extra={
                    "attachment_id": att.get("id"),
                    "is_patch": is_patch,
                    "is_obsolete": bool(att.get("is_obsolete")),
                },
            )
            doc.references.append(ref)
            doc.facts.append(Fact(f"attachment {att.get('id')}", src, ref=ref))
    for key in ("see_also",):
        values = obj.get(key)
        if isinstance(values, list):
            for i, uri in enumerate(values):
                if isinstance(uri, str):
                    doc.references.append(Reference("url", at(key, i), key, uri=uri))
    doc.identity = {"case_id": safe_identity(f"bz-{bug_id}")}
    return doc


# -- Markdown ---------------------------------------------------------------------------

_H1 = re.compile(r"^\s{0,3}#\s+(?P<t>.+?)\s*#*\s*$", re.M)


def parse_markdown(data: bytes, member: str) -> IntakeDocument:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntakeError(f"{member} is not UTF-8: {exc}", code="intake.invalid_text") from None
    doc = IntakeDocument(format="markdown", member=member)
    src = Source(member, None, None, None, "original", "reporter")
    m = _H1.search(text)
    if m:
        doc.titles.append(Item(m.group("t"), src.with_span(m.start("t"), m.end("t"))))
        body_start = m.end()
    else:
        first = text.strip().splitlines()[0] if text.strip() else ""
        if first:
            start = text.index(first)
            doc.titles.append(Item(first.strip(), src.with_span(start, start + len(first))))
        body_start = 0
    body = text[body_start:]
    apply_body(doc, body, src.with_span(body_start, len(text)))
    title = doc.titles[0].text if doc.titles else "report"
    doc.identity = {"case_id": safe_identity("md-" + title.lower())[:60]}
    return doc
