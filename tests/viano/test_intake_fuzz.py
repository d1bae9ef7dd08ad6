"""Any JSON shape given to a parser gives an IntakeError or a case, never a crash."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.case.records import RecordSet
from viano_bug_analysis.errors import IntakeError
from viano_bug_analysis.intake.formats import parser_for

KEYS = [
    "title",
    "body",
    "user",
    "author",
    "login",
    "username",
    "created_at",
    "createdAt",
    "comments",
    "labels",
    "name",
    "html_url",
    "url",
    "number",
    "summary",
    "id",
    "creator",
    "creation_time",
    "text",
    "count",
    "attachments",
    "size",
    "is_patch",
    "content_type",
    "product",
    "component",
    "version",
    "keywords",
    "see_also",
    "intake_format",
    "observations",
    "expected_behavior",
    "steps",
    "facts",
    "value",
    "value_ref",
    "member",
    "kind",
    "references",
    "tester_hypotheses",
    "environment",
    "reporter",
    "origin",
    "uri",
    "reproductions",
    "description",
    "author_association",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.text(max_size=40),
    st.sampled_from(
        [
            "viano-intake/1",
            "```\nat x (a.js:1:1)\n```",
            "Expected: it works",
            "original/a.log",
            "https://github.com/o/r/issues/1",
            "external_research",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=6),
    ),
    max_leaves=25,
)
documents = st.dictionaries(st.sampled_from(KEYS), values, max_size=12)


@settings(max_examples=300, deadline=None)
@given(doc=documents, fmt=st.sampled_from(["github-issue", "bugzilla", "viano-intake"]))
def test_parsers_never_crash(doc: dict[str, Any], fmt: str) -> None:
    data = json.dumps(doc).encode()
    try:
        parsed = parser_for(fmt)(data, "original/x.json")
    except IntakeError as exc:
        assert exc.code.startswith("intake.")
        return
    records = RecordSet(CaseBuilderLimits())
    records.add_document(parsed)
    records.finish()
    ids = [r["id"] for r in records.records]
    assert len(ids) == len(set(ids))
    assert sum(1 for r in records.records if r["kind"] == "expected_behavior_completeness") == 1


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_markdown_never_crashes(text: str) -> None:
    parsed = parser_for("markdown")(text.encode("utf-8", "surrogatepass"), "original/r.md")
    records = RecordSet(CaseBuilderLimits())
    records.add_document(parsed)
    records.finish()
    for rec in records.records:
        span = rec["provenance"].get("span")
        if span is not None:
            assert 0 <= span[0] <= span[1] <= len(text)
