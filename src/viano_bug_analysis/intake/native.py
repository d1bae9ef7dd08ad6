"""The native Viano intake JSON (``"intake_format": "viano-intake/1"``).

See docs/intake-format.md. Strings may be given as plain strings or as objects with
``text`` plus optional ``author``, ``timestamp`` and ``origin`` (``original`` or
``external_research``). Unknown top-level keys are refused so typos do not pass silently.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from viano_bug_analysis.errors import IntakeError
from viano_bug_analysis.intake.model import (
    Fact,
    IntakeDocument,
    Item,
    Reference,
    Source,
    json_pointer,
)
from viano_bug_analysis.intake.raw import load_json_object, safe_identity

INTAKE_FORMAT = "viano-intake/1"
_KEYS = {
    "intake_format",
    "case_id",
    "title",
    "summary",
    "reporter",
    "created_at",
    "environment",
    "observations",
    "expected_behavior",
    "steps",
    "comments",
    "tester_hypotheses",
    "facts",
    "reproductions",
    "references",
    "labels",
}
_REF_KINDS = {
    "attachment",
    "log",
    "stack_trace",
    "runtime",
    "source",
    "database",
    "external_research",
    "url",
}
_ORIGINS = {"original", "external_research"}


class _Ctx:
    def __init__(self, member: str, reporter: str | None, created: str | None) -> None:
        self.member = member
        self.reporter = reporter
        self.created = created

    def fail(self, pointer: str, why: str) -> IntakeError:
        return IntakeError(
            f"{self.member}{pointer or '/'}: {why}",
            code="intake.invalid",
            member=self.member,
            json_pointer=pointer,
        )

    def item(self, value: Any, parts: tuple[str | int, ...], role: str) -> Item:
        """The Item of a string, or of an object with ``text`` and optional ``author``,
        ``timestamp``, ``origin``, ``source_uri`` and ``heading``, at ``parts``. A
        reporter's text defaults to the report's reporter and creation time."""
        pointer = json_pointer(*parts)
        if isinstance(value, str):
            author = self.reporter if role == "reporter" else None
            return Item(value, Source(self.member, pointer, author, self.created, "original", role))
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            raise self.fail(pointer, "expected a string or an object with a string 'text'")
        origin = value.get("origin", "original")
        if origin not in _ORIGINS:
            raise self.fail(pointer + "/origin", f"origin must be one of {sorted(_ORIGINS)}")
        author = value.get("author", self.reporter if role == "reporter" else None)
        stamp = value.get("timestamp", self.created if role == "reporter" else None)
        if author is not None and not isinstance(author, str):
            raise self.fail(pointer + "/author", "must be a string")
        if stamp is not None and not isinstance(stamp, str):
            raise self.fail(pointer + "/timestamp", "must be a string")
        extra = {k: v for k, v in value.items() if k in ("source_uri", "heading")}
        role = "research" if origin == "external_research" else role
        source = Source(self.member, pointer + "/text", author, stamp, origin, role)
        return Item(value["text"], source, extra)

    def items(self, obj: dict[str, Any], key: str, role: str) -> list[Item]:
        """The Items of the list at ``key`` (none when it is absent or null)."""
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(json_pointer(key), "expected a list")
        return [self.item(v, (key, i), role) for i, v in enumerate(value)]


def parse_native(data: bytes, member: str) -> IntakeDocument:
    obj = load_json_object(data, member)
    fmt = obj.get("intake_format")
    if fmt != INTAKE_FORMAT:
        raise IntakeError(
            f"{member}: intake_format must be {INTAKE_FORMAT!r}, got {fmt!r}",
            code="intake.invalid",
            member=member,
        )
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise IntakeError(f"{member}: unknown keys {unknown}", code="intake.invalid", member=member)
    reporter_obj = obj.get("reporter")
    reporter = (
        reporter_obj
        if isinstance(reporter_obj, str)
        else (reporter_obj.get("name") if isinstance(reporter_obj, dict) else None)
    )
    created = obj.get("created_at") if isinstance(obj.get("created_at"), str) else None
    ctx = _Ctx(member, reporter, created)
    title = obj.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ctx.fail("/title", "a non-empty string 'title' is required")
    doc = IntakeDocument(format="viano-intake", member=member)
    doc.titles.append(ctx.item(title, ("title",), "reporter"))
    if obj.get("summary") is not None:
        doc.summaries.append(ctx.item(obj["summary"], ("summary",), "reporter"))
    doc.observations = ctx.items(obj, "observations", "reporter")
    expected = obj.get("expected_behavior")
    if isinstance(expected, str | dict):
        expected = [expected]
        exp_items = [ctx.item(obj["expected_behavior"], ("expected_behavior",), "reporter")]
    elif expected is None or isinstance(expected, list):
        exp_items = ctx.items(obj, "expected_behavior", "reporter")
    else:
        raise ctx.fail("/expected_behavior", "expected null, a string, an object or a list")
    for it in exp_items:
        doc.expectations.append(Item(it.text, it.source, {**it.extra, "explicit": True}))
    doc.steps = ctx.items(obj, "steps", "reporter")
    doc.comments = ctx.items(obj, "comments", "commenter")
    doc.hypotheses = [
        Item(i.text, replace(i.source, origin="tester", role="tester"), i.extra)
        for i in ctx.items(obj, "tester_hypotheses", "tester")
    ]
    doc.reproductions = ctx.items(obj, "reproductions", "reporter")
    env = obj.get("environment")
    if env is not None:
        if not isinstance(env, dict):
            raise ctx.fail("/environment", "expected an object of name: value")
        for key, value in env.items():
            if not isinstance(value, str | int | float | bool):
                raise ctx.fail(json_pointer("environment", key), "expected a scalar value")
            doc.facts.append(
                Fact(
                    str(key),
                    Source(member, json_pointer("environment", key), reporter, created),
                    value=str(value),
                )
            )
    _facts_and_references(obj, ctx, doc)
    labels = obj.get("labels")
    if isinstance(labels, list):
        for i, label in enumerate(labels):
            if isinstance(label, str):
                doc.facts.append(
                    Fact(
                        "label",
                        Source(member, json_pointer("labels", i), reporter, created),
                        value=label,
                    )
                )
    case_id = obj.get("case_id")
    doc.identity = {"case_id": safe_identity(case_id if isinstance(case_id, str) else title)}
    return doc


def _reference(value: Any, parts: tuple[str | int, ...], ctx: _Ctx, default_kind: str) -> Reference:
    pointer = json_pointer(*parts)
    if not isinstance(value, dict):
        raise ctx.fail(pointer, "a reference must be an object")
    kind = value.get("kind", default_kind)
    if kind not in _REF_KINDS:
        raise ctx.fail(pointer + "/kind", f"kind must be one of {sorted(_REF_KINDS)}")
    member, uri = value.get("member"), value.get("uri")
    if not isinstance(member, str | type(None)) or not isinstance(uri, str | type(None)):
        raise ctx.fail(pointer, "'member' and 'uri' must be strings")
    if member is None and uri is None:
        raise ctx.fail(pointer, "a reference needs 'member' (inside the package) or 'uri'")
    if member is not None and not member.startswith("original/"):
        raise ctx.fail(pointer + "/member", "a referenced member must be under original/")
    origin = "external_research" if kind == "external_research" else value.get("origin", "original")
    if origin not in _ORIGINS:
        raise ctx.fail(pointer + "/origin", f"origin must be one of {sorted(_ORIGINS)}")
    src = Source(
        ctx.member,
        pointer,
        value.get("author"),
        value.get("timestamp"),
        origin,
        "research" if origin == "external_research" else "reporter",
    )
    desc = value.get("description", "")
    return Reference(
        kind,
        src,
        desc if isinstance(desc, str) else "",
        member=member,
        uri=uri,
        media_type=value.get("media_type") if isinstance(value.get("media_type"), str) else None,
    )


def _facts_and_references(obj: dict[str, Any], ctx: _Ctx, doc: IntakeDocument) -> None:
    facts = obj.get("facts") or []
    if not isinstance(facts, list):
        raise ctx.fail("/facts", "expected a list")
    for i, fact in enumerate(facts):
        pointer = json_pointer("facts", i)
        if not isinstance(fact, dict) or not isinstance(fact.get("name"), str):
            raise ctx.fail(pointer, "a fact is an object with a string 'name'")
        has_value, has_ref = "value" in fact, "value_ref" in fact
        if has_value == has_ref:
            raise ctx.fail(pointer, "a fact has exactly one of 'value' and 'value_ref'")
        origin = fact.get("origin", "original")
        if origin not in _ORIGINS:
            raise ctx.fail(pointer + "/origin", f"origin must be one of {sorted(_ORIGINS)}")
        src = Source(
            ctx.member,
            pointer,
            fact.get("author", ctx.reporter),
            fact.get("timestamp", ctx.created),
            origin,
            "research" if origin == "external_research" else "reporter",
        )
        if has_value:
            value = fact["value"]
            if not isinstance(value, str | int | float | bool):
                raise ctx.fail(pointer + "/value", "an inline value must be a scalar")
            doc.facts.append(Fact(fact["name"], src, value=str(value)))
        else:
            ref = _reference(fact["value_ref"], ("facts", i, "value_ref"), ctx, "attachment")
            doc.references.append(ref)
            doc.facts.append(Fact(fact["name"], src, ref=ref))
    refs = obj.get("references") or []
    if not isinstance(refs, list):
        raise ctx.fail("/references", "expected a list")
    for i, ref in enumerate(refs):
        doc.references.append(_reference(ref, ("references", i), ctx, "url"))
