"""RecordSet: allocates record ids and turns intake documents into canonical records.

Kinds and id prefixes (ids are ``<prefix><4+ digits>``, numbered per prefix from 0001 in
build order; Q0001 always exists):

====  ===============================  =========================================
B     report                           titles (``role: title``) and summaries
S     step                             explicit reproduction steps (``order``)
O     observation                      reported behaviour (``section``)
E     expectation                      intended behaviour (``explicit``)
C     comment                          comments in the thread
T     tester_hypothesis                suspicions stated by reporter/testers
F     fact                             ``value`` inline, or ``value_ref`` (unread)
R     reproduction                     reproduction descriptions (``steps``)
N     entity                           components, versions, endpoints, files, error codes
D     data_quality                     ``code`` + ``cites``
Q     expected_behavior_completeness   ``value``: complete|incomplete|missing|conflicting
X     unread_reference                 metadata of data left unread (size, sha256)
====  ===============================  =========================================
"""

from __future__ import annotations

import re
from typing import Any

from viano_bug_analysis.case import entities
from viano_bug_analysis.case import heuristics as h
from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.intake.model import Fact, IntakeDocument, Item, Reference, Source
from viano_bug_analysis.packages.canonical import sha256_hex

KINDS = {
    "B": "report",
    "S": "step",
    "O": "observation",
    "E": "expectation",
    "C": "comment",
    "T": "tester_hypothesis",
    "F": "fact",
    "R": "reproduction",
    "N": "entity",
    "D": "data_quality",
    "Q": "expected_behavior_completeness",
    "X": "unread_reference",
}
ORDER = "BSOECTFRNDQX"
_PLACEHOLDER_EXPECTATIONS = {"", "n/a", "na", "none", "-", "--", "tbd", "?", "same", "nothing"}
ORIGIN_DERIVED = "derived"  # made by CaseBuilder (D, Q), not supplied data


_AS_EXPECTED = re.compile(r"(?i)\bas (?:expected|intended)\b")
_QUESTIONS_ONLY = (
    "the expected-behaviour section holds only questions or wishes (an unfilled template, "
    "or a reporter asking what is intended)"
)


def _system_provenance() -> dict[str, Any]:
    return {
        "member": None,
        "json_pointer": None,
        "author": None,
        "timestamp": None,
        "origin": ORIGIN_DERIVED,
        "role": "system",
    }


class RecordSet:
    def __init__(self, limits: CaseBuilderLimits) -> None:
        self.limits = limits
        self._by_kind: dict[str, list[dict[str, Any]]] = {k: [] for k in ORDER}
        self._count = 0
        self._ref_ids: dict[int, str] = {}  # id(Reference) -> X id
        self._empty_expected: list[dict[str, Any]] = []
        self.completeness = "missing"
        self.records: list[dict[str, Any]] = []
        self._entities: dict[tuple[str, str], dict[str, Any]] = {}

    # -- allocation -----------------------------------------------------------------------

    def _new(
        self, prefix: str, source: Source | None, text: str | None = None, **fields: Any
    ) -> dict[str, Any]:
        provenance = source.to_json() if source is not None else _system_provenance()
        return self._add(prefix, provenance, text, fields)

    def _add(
        self,
        prefix: str,
        provenance: dict[str, Any],
        text: str | None,
        fields: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """The next record of kind ``prefix`` (checks ``max_records`` and the text size)."""
        self._count += 1
        self.limits.check("max_records", self._count)
        same_kind = self._by_kind[prefix]
        record: dict[str, Any] = {
            "id": f"{prefix}{len(same_kind) + 1:04d}",
            "kind": KINDS[prefix],
            "provenance": provenance,
        }
        if text is not None:
            self.limits.check("max_record_text_bytes", len(text.encode("utf-8")))
            record["text"] = text
        if fields:
            record.update(fields)
        same_kind.append(record)
        return record

    def _leave_unread(
        self, text: str, source: Source, blocks: list[h.Block]
    ) -> tuple[str, list[str]]:
        """Long logs, traces and code blocks left unread: ``text`` with ``blocks`` (from
        ``find_unread_blocks``, not empty) replaced by placeholders, one X record each,
        and the ids of those records."""
        parts: list[str] = []
        ids: list[str] = []
        pos = 0
        for block in blocks:
            raw = text[block.start : block.end].encode("utf-8")
            x = self._new(
                "X",
                source.with_span(block.start, block.end),
                None,
                ref_kind=block.kind,
                unread=True,
                embedded=True,
                size=len(raw),
                sha256=sha256_hex(raw),
                line_count=block.lines,
                media_type="text/plain",
                member=source.member or None,
                description=f"{block.kind.replace('_', ' ')} in the report text",
            )
            ids.append(x["id"])
            parts.append(text[pos : block.start])
            parts.append(f"[unread {x['id']}: {block.kind}, {len(raw)} bytes, {block.lines} lines]")
            pos = block.end
        parts.append(text[pos:])
        return "".join(parts), ids

    def _text_record(
        self, prefix: str, item: Item, fields: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The record of a piece of text from a parser, its long blocks left unread."""
        text = item.text
        fields = dict(fields) if fields else {}
        blocks = h.find_unread_blocks(
            text, self.limits.unread_block_bytes, self.limits.unread_block_lines
        )
        if blocks:
            text, fields["unread_refs"] = self._leave_unread(text, item.source, blocks)
        return self._add(prefix, item.source.to_json(), text, fields)

    # -- documents ------------------------------------------------------------------------

    def add_document(self, doc: IntakeDocument) -> None:
        for item in doc.titles:
            self._text_record("B", item, {"role": "title"})
        for item in doc.summaries:
            self._text_record("B", item, {"role": "summary"})
        step_ids = [
            self._text_record("S", item, {"order": i + 1})["id"] for i, item in enumerate(doc.steps)
        ]
        observations = [
            self._text_record("O", item, {"section": item.extra.get("section", "description")})
            for item in doc.observations
            if item.text.strip()
        ]
        explicit = [e for e in doc.expectations if e.extra.get("explicit", True)]
        for item in explicit:
            if item.text.strip().lower().strip(".") in _PLACEHOLDER_EXPECTATIONS:
                self._empty_expected.append({"source": item.source})
                continue
            wording = h.section_wording(item.text)
            if wording == h.NOT_STATED:
                self._empty_expected.append({"source": item.source, "why": _QUESTIONS_ONLY})
                continue
            extra = {"source_uri": item.extra["source_uri"]} if "source_uri" in item.extra else {}
            if wording == h.HEDGED:
                # "It should be dark throughout, I think": what the reporter is unsure
                # of is at most implied, as in free text (ADR 0102)
                extra["hedged"] = True
            self._text_record("E", item, {"explicit": wording == h.STATED, **extra})
        if not explicit:
            self._implicit_expectations(self._by_kind["B"], observations)
        for item in doc.reproductions:
            self._text_record("R", item, {"steps": step_ids})
        for o in observations:
            if o["provenance"]["role"] == "reporter":
                self._hypotheses_in(o)
        for item in doc.comments:
            self._comment(self._text_record("C", item), item.text)
        for item in doc.hypotheses:
            self._text_record("T", item)
        for ref in doc.references:
            self._reference(ref)
        for fact in doc.facts:
            self._fact(fact)
        for hint in doc.entities:
            self._entity(hint.entity_type, hint.value, None, hint.source.to_json())

    def _comment(self, c: dict[str, Any], text: str) -> None:
        """After comment record ``c`` of ``text``: its hypotheses, or a D record if empty."""
        if text.strip():
            self._hypotheses_in(c)
        else:
            self._new(
                "D",
                None,
                "a comment in the thread is empty",
                code="empty_comment",
                cites=[c["id"]],
            )

    def _implicit_expectations(
        self, titles: list[dict[str, Any]], observations: list[dict[str, Any]]
    ) -> None:
        for rec in [*titles, *observations]:
            if rec["provenance"]["role"] != "reporter":
                continue
            for sentence, start, end in h.expectation_sentences(rec["text"]):
                if "[unread X" in sentence or h.expectation_wording(sentence) == h.NOT_STATED:
                    # a question ("Should I add a test?", "Is this expected") asks about
                    # the intended behaviour and a wish ("it would be nice if ...") asks
                    # for a change; neither states what is intended
                    continue
                if not h.is_expectation(_AS_EXPECTED.sub(" ", sentence)):
                    # "It works as expected." says that something met an expectation
                    # without saying what is intended
                    continue
                src = rec["provenance"]
                prov = dict(src)
                if "span" in src and src["span"] is not None and rec["text"] == rec.get("text"):
                    prov["span"] = (
                        None
                        if "unread_refs" in rec
                        else [src["span"][0] + start, src["span"][0] + end]
                    )
                if prov.get("span") is None:
                    prov.pop("span", None)
                record = self._new("E", None, sentence, explicit=False, derived_from=rec["id"])
                record["provenance"] = prov

    def _hypotheses_in(self, rec: dict[str, Any]) -> None:
        """T records for the hypotheses stated in record ``rec``."""
        for sentence, start, end in h.hypothesis_sentences(rec["text"]):
            if "[unread X" in sentence:
                continue
            prov = dict(rec["provenance"])
            prov["origin"] = "tester"
            if prov.get("span") is not None and "unread_refs" not in rec:
                prov["span"] = [prov["span"][0] + start, prov["span"][0] + end]
            elif prov.get("span") is None and "unread_refs" not in rec:
                prov["span"] = [start, end]
            else:
                prov.pop("span", None)
            self._add("T", prov, sentence, {"derived_from": rec["id"]})

    def _reference(self, ref: Reference) -> str:
        key = id(ref)
        if key in self._ref_ids:
            return self._ref_ids[key]
        fields: dict[str, Any] = {
            "ref_kind": ref.kind,
            "unread": True,
            "embedded": False,
            "description": ref.description,
        }
        for name in ("member", "uri", "size", "sha256", "media_type"):
            fields[name] = getattr(ref, name)
        if ref.extra:
            fields["details"] = {
                k: v for k, v in ref.extra.items() if isinstance(v, str | int | bool | type(None))
            }
        x = self._new("X", ref.source, None, **fields)
        self._ref_ids[key] = x["id"]
        return str(x["id"])

    def _fact(self, fact: Fact) -> None:
        if fact.ref is not None:
            xid = self._reference(fact.ref)
            self._new(
                "F",
                fact.source,
                f"{fact.name}: unread reference {xid}",
                name=fact.name,
                inline=False,
                value_ref=xid,
            )
            return
        value = fact.value or ""
        if len(value.encode("utf-8")) > self.limits.unread_fact_bytes:
            raw = value.encode("utf-8")
            x = self._new(
                "X",
                fact.source,
                None,
                ref_kind="log",
                unread=True,
                embedded=True,
                size=len(raw),
                sha256=sha256_hex(raw),
                media_type="text/plain",
                member=fact.source.member or None,
                uri=None,
                line_count=value.count("\n") + 1,
                description=f"long value of fact {fact.name!r}",
            )
            self._new(
                "F",
                fact.source,
                f"{fact.name}: unread reference {x['id']}",
                name=fact.name,
                inline=False,
                value_ref=x["id"],
            )
            return
        self._new(
            "F", fact.source, f"{fact.name}: {value}", name=fact.name, inline=True, value=value
        )

    # -- entities ---------------------------------------------------------------------------

    def _entity(
        self, etype: str, value: str, mention: str | None, provenance: dict[str, Any]
    ) -> None:
        key = (etype, value.lower())
        entities = self._entities
        if key not in entities:
            if len(entities) >= self.limits.max_entities:
                return
            entities[key] = {
                "entity_type": etype,
                "value": value,
                "mentions": [],
                "provenance": provenance,
                "origins": set(),
            }
        entry = entities[key]
        entry["origins"].add(provenance.get("origin", "original"))
        if (
            mention
            and mention not in entry["mentions"]
            and (len(entry["mentions"]) < self.limits.max_entity_mentions)
        ):
            entry["mentions"].append(mention)

    def _scan_entities(self) -> None:
        """Entities of every text (B S O E C T R) and inline fact value (F), in record
        order."""
        for prefix in "BSOECTRF":
            key = "value" if prefix == "F" else "text"
            for rec in self._by_kind[prefix]:
                text = rec.get(key)
                if isinstance(text, str) and text:
                    for etype, value in entities.extract_entities(text):
                        self._entity(etype, value, rec["id"], rec["provenance"])

    # -- references to members, unread members ---------------------------------------------

    def resolve_member_refs(self, hashes: dict[str, tuple[int, str]]) -> None:
        for x in self._by_kind["X"]:
            member = x.get("member")
            if x.get("embedded") or not member:
                continue
            if member in hashes:
                x["size"], x["sha256"] = hashes[member]
            else:
                self._new(
                    "D",
                    None,
                    f"referenced member {member} is not in the package",
                    code="missing_referenced_member",
                    cites=[x["id"]],
                )

    def add_unread_member(self, name: str, size: int, sha: str) -> None:
        src = Source(name, None, None, None, "original", "reporter")
        self._new(
            "X",
            src,
            None,
            ref_kind="attachment",
            unread=True,
            embedded=False,
            member=name,
            uri=None,
            size=size,
            sha256=sha,
            media_type=_media_type(name),
            description="file supplied under original/ (not parsed)",
        )

    # -- completion ----------------------------------------------------------------------

    def finish(self) -> None:
        self._scan_entities()
        for (etype, _), entry in sorted(self._entities.items()):
            origins = entry.pop("origins")
            prov = dict(entry.pop("provenance"))
            prov["origin"] = next(iter(origins)) if len(origins) == 1 else "combined"
            prov.pop("span", None)
            rec = self._new(
                "N",
                None,
                entry["value"],
                entity_type=etype,
                value=entry["value"],
                mentions=entry["mentions"],
            )
            rec["provenance"] = prov
        self._data_quality()
        self.records = [r for k in ORDER for r in self._by_kind[k]]

    def _data_quality(self) -> None:
        es = self._by_kind["E"]
        explicit = [e for e in es if e.get("explicit")]
        origins = sorted({e["provenance"]["origin"] for e in es})
        distinct = {
            (
                " ".join(e["text"].lower().split()),
                e["provenance"].get("author"),
                e["provenance"]["origin"],
            )
            for e in explicit
        }
        sources = {(a, o) for _, a, o in distinct}
        texts = {t for t, _, _ in distinct}
        if len(texts) >= 2 and len(sources) >= 2:
            status, why = "conflicting", "explicit expected behaviour differs between sources"
            self._new(
                "D",
                None,
                why,
                code="conflicting_expected_behavior",
                cites=[e["id"] for e in explicit],
            )
        elif explicit and all(len(e["text"].strip()) >= 10 for e in explicit):
            status, why = "complete", "the report states the expected behaviour explicitly"
        elif es:
            status = "incomplete"
            why = (
                "expected behaviour is only implied by the wording of the report"
                if not explicit
                else "the stated expected behaviour is very short"
            )
            self._new(
                "D", None, why, code="incomplete_expected_behavior", cites=[e["id"] for e in es]
            )
        else:
            status, why = "missing", "the report does not state the expected behaviour"
            self._new("D", None, why, code="missing_expected_behavior", cites=[])
        for empty in self._empty_expected:
            d = self._new(
                "D",
                None,
                empty.get("why", "the expected-behaviour section is present but empty"),
                code="empty_expected_behavior",
                cites=[],
            )
            # where the empty section is, but derived by the builder, not supplied data
            d["provenance"] = {
                **empty["source"].to_json(),
                "origin": ORIGIN_DERIVED,
                "role": "system",
            }
        if not self._by_kind["S"]:
            self._new(
                "D",
                None,
                "the report gives no explicit reproduction steps",
                code="missing_steps",
                cites=[],
            )
        if not self._by_kind["O"]:
            self._new(
                "D",
                None,
                "the report describes no observed behaviour",
                code="missing_observations",
                cites=[],
            )
        versions: dict[str, dict[str, str]] = {}
        for n in self._by_kind["N"]:
            if n["entity_type"] == "version" and (key := entities.version_key(n["value"])):
                versions.setdefault(key[0], {})[key[1]] = n["id"]
        for name, seen in sorted(versions.items()):
            if len(seen) >= 2:
                self._new(
                    "D",
                    None,
                    f"different versions are given for {name}: " + ", ".join(sorted(seen)),
                    code="conflicting_versions",
                    cites=sorted(seen.values()),
                )
        origin = origins[0] if len(origins) == 1 else ("combined" if origins else "original")
        self.completeness = status
        self._new(
            "Q",
            None,
            why,
            value=status,
            cites=[e["id"] for e in es],
            explicit=bool(explicit),
            origins=origins,
            expected_behavior_provenance=origin,
        )

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self._by_kind.items()}


def _media_type(name: str) -> str:
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
    return {
        "log": "text/plain",
        "txt": "text/plain",
        "json": "application/json",
        "md": "text/markdown",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "zip": "application/zip",
        "gz": "application/gzip",
        "html": "text/html",
        "xml": "application/xml",
        "csv": "text/csv",
        "sql": "application/sql",
        "db": "application/octet-stream",
    }.get(ext, "application/octet-stream")
