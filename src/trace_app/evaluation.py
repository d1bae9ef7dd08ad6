"""``trace eval``: run a labelled set of reports through the real investigation.

Each case (one JSON object per line, see docs/evaluation.md) becomes its own incident in
a throw-away SQLite database: the named sources publish one report each, then the case's
report is published through :func:`publish_report`, and :class:`InvestigationService`
investigates it with the configured model behind a fresh passphrase and a throw-away
ledger. Nothing here decides a label or a status: the service does, with the same rules,
prompts, gateway and ledger as the web app. This module only counts.

Measured per case: the model's label and source (first call), the final status, calls
sent, wall-clock latency of the whole investigation, and tokens. Summed up: a confusion
matrix, label and source accuracy (an invalid answer counts as wrong), the count of
*misleading* outcomes (a report labelled RELAY or UNCLEAR by the set that ends
COMPLETED, i.e. shown to a person as first-hand) with their case ids, first-hand recall
(DIRECT cases ending COMPLETED over the DIRECT cases within the length limit), how many
COMPLETED the evidence rule lowered and by which cue kind, the share of valid first
answers, and the ledger's own request count as a cross-check. The same figures without
the evidence rule (``summary(rule_off=True)``) are worked out from what the rule lowered,
for comparison only: the app itself has no such switch.

Cases come from a JSONL file of the project's own format, or straight from CrisisLexT26
labelled CSV files (:func:`load_crisislex`).
"""

from __future__ import annotations

import csv
import json
import random
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from modelgate.evaluation_report import confusion, confusion_lines, counts, percent, share
from modelgate.evaluation_report import write_report as _write_report
from modelgate.ledger import JsonFileLedger
from modelgate.providers import Provider, ProviderConfig, build_provider
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.investigation.answers import NO_SOURCE, Attribution
from trace_app.investigation.evidence import MAX_TEXT_CHARACTERS
from trace_app.investigation.model_settings import ModelSettings
from trace_app.investigation.service import InvestigationService
from trace_app.investigation.vocabulary import Status
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import ClaimStatus, Incident
from trace_app.store.types import new_id

LABELS: tuple[str, ...] = tuple(a.value for a in Attribution)
INVALID = "INVALID"
CASE_START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
CASES_PER_LEDGER = 500


class EvalCaseError(InvalidInputError):
    """A line of the cases file is not a valid case (the message names the line)."""

    code = "eval_case_invalid"


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One labelled report. ``named_sources`` each publish one report in the same incident
    (text from ``named_source_texts`` or a short neutral entry) before the case's report."""

    id: str
    text: str
    source: str
    named_sources: tuple[str, ...]
    label: str
    referenced_source: str
    person: str = "Unnamed Person"
    named_source_texts: dict[str, str] = field(default_factory=dict)


_REQUIRED = ("text", "source", "named_sources", "label", "referenced_source")
_OPTIONAL = ("id", "person", "named_source_texts", "note")


def parse_case(data: Any, *, where: str) -> EvalCase:
    """One case from a decoded JSON object; :class:`EvalCaseError` when it is unusable."""
    if not isinstance(data, dict):
        raise EvalCaseError(f"{where}: a case is a JSON object")
    missing = [key for key in _REQUIRED if key not in data]
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if missing or unknown:
        raise EvalCaseError(f"{where}: missing keys {missing}, unknown keys {unknown}")
    named = data["named_sources"]
    texts = data.get("named_source_texts", {})
    strings = [data["text"], data["source"], data["label"], data["referenced_source"]]
    if not all(isinstance(v, str) for v in strings):
        raise EvalCaseError(f"{where}: text, source, label, referenced_source must be strings")
    if not isinstance(named, list) or not all(isinstance(n, str) and n.strip() for n in named):
        raise EvalCaseError(f"{where}: named_sources must be a list of names")
    if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
        raise EvalCaseError(f"{where}: named_source_texts must map names to texts")
    if data["label"] not in LABELS:
        raise EvalCaseError(f"{where}: label must be one of {', '.join(LABELS)}")
    expected = data["referenced_source"]
    if expected != NO_SOURCE and expected not in named:
        raise EvalCaseError(f"{where}: referenced_source must be NONE or one of named_sources")
    if data["source"] in named:
        raise EvalCaseError(f"{where}: a report cannot name its own source")
    return EvalCase(
        id=str(data.get("id") or where),
        text=data["text"],
        source=data["source"],
        named_sources=tuple(named),
        label=data["label"],
        referenced_source=expected,
        person=str(data.get("person") or "Unnamed Person"),
        named_source_texts=dict(texts),
    )


def load_cases(path: Path) -> list[EvalCase]:
    """Every case in a JSONL file (blank lines and lines starting with ``#`` are skipped)."""
    cases: list[EvalCase] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise EvalCaseError(f"{where}: not JSON ({error.msg})") from None
        cases.append(parse_case(data, where=where))
    if not cases:
        raise EvalCaseError(f"{path}: no cases")
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise EvalCaseError(f"{path}: case ids must be unique")
    return cases


# --- CrisisLexT26 labelled tweets --------------------------------------------------------

CRISISLEX_INFORMATIVE = "Related and informative"
# Information source -> the label a case gets. Eyewitness tweets are first-hand; tweets
# by outsiders and media pass on what others saw, so they must never read as first-hand
# (UNCLEAR: the set says who posted, not where the information came from).
CRISISLEX_LABELS = {
    "Eyewitness": Attribution.DIRECT.value,
    "Outsiders": Attribution.UNCLEAR.value,
    "Media": Attribution.UNCLEAR.value,
}
CRISISLEX_SOURCE = "Tweet author (CrisisLexT26)"
_CRISISLEX_COLUMNS = ("Tweet ID", "Tweet Text", "Information Source", "Informativeness")


def load_crisislex(paths: Sequence[Path]) -> tuple[list[EvalCase], dict[str, int]]:
    """Cases from CrisisLexT26 labelled CSV files, and how many rows were skipped, by why.

    Only "Related and informative" tweets are kept; Eyewitness tweets become DIRECT cases,
    Outsiders and Media tweets UNCLEAR ones; every other information source is skipped
    and counted. A tweet's id (with its file) names the case.
    """
    cases: list[EvalCase] = []
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    for path in paths:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, skipinitialspace=True)
            columns = [c.strip() for c in reader.fieldnames or ()]
            missing = [c for c in _CRISISLEX_COLUMNS if c not in columns]
            if missing:
                raise EvalCaseError(f"{path.name}: not a CrisisLexT26 file (no {missing})")
            for number, row in enumerate(reader, start=2):
                row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
                if row["Informativeness"] != CRISISLEX_INFORMATIVE:
                    key = "not related and informative"
                    skipped[key] = skipped.get(key, 0) + 1
                    continue
                label = CRISISLEX_LABELS.get(row["Information Source"])
                if label is None:
                    key = f"source {row['Information Source'] or '(none)'}"
                    skipped[key] = skipped.get(key, 0) + 1
                    continue
                case_id = f"{path.name.split('-tweets')[0]}:{row['Tweet ID'] or number}"
                if case_id in seen:
                    skipped["repeated tweet id"] = skipped.get("repeated tweet id", 0) + 1
                    continue
                seen.add(case_id)
                cases.append(
                    EvalCase(
                        id=case_id,
                        text=row["Tweet Text"],
                        source=CRISISLEX_SOURCE,
                        named_sources=(),
                        label=label,
                        referenced_source=NO_SOURCE,
                    )
                )
    return cases, dict(sorted(skipped.items()))


def sample_cases(cases: Sequence[EvalCase], others: int, seed: int) -> list[EvalCase]:
    """Every DIRECT case and ``others`` of the rest drawn at random with ``seed`` (all of
    them when there are fewer), in their original order: a shorter run that keeps every
    first-hand case for recall and a random share of the rest for misleading outcomes."""
    rest = [i for i, case in enumerate(cases) if case.label != Attribution.DIRECT]
    drawn = set(random.Random(seed).sample(rest, min(others, len(rest))))
    return [c for i, c in enumerate(cases) if c.label == Attribution.DIRECT or i in drawn]


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What the real flow did with one case."""

    id: str
    expected_label: str
    expected_source: str
    status: str
    label: str  # the model's first label, or INVALID when no valid answer came back
    referenced_source: str | None
    support: str | None
    requests_sent: int
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    usage_source: str
    saved: bool
    reason: str
    # what the evidence rule lowered (cue kinds, or "no_first_hand"); empty when nothing
    lowered_by: tuple[str, ...] = ()
    # the kinds of attribution cue found in the text
    cue_kinds: tuple[str, ...] = ()
    text_characters: int = 0

    @property
    def within_limit(self) -> bool:
        """Whether the text could be sent at all (not empty, at most 3,000 characters)."""
        return 0 < self.text_characters <= MAX_TEXT_CHARACTERS

    def final_status(self, *, rule_off: bool = False) -> str:
        """The status, or with ``rule_off`` the one the label rules gave before the
        evidence rule lowered it (for comparison only)."""
        return Status.COMPLETED.value if rule_off and self.lowered_by else self.status

    @property
    def valid(self) -> bool:
        return self.label != INVALID

    @property
    def label_correct(self) -> bool:
        return self.label == self.expected_label

    @property
    def source_correct(self) -> bool:
        return self.valid and self.referenced_source == self.expected_source

    @property
    def misleading(self) -> bool:
        """A report the set says is not first-hand, shown to a person as COMPLETED."""
        return self.is_misleading()

    def is_misleading(self, *, rule_off: bool = False) -> bool:
        return (
            self.expected_label != Attribution.DIRECT
            and self.final_status(rule_off=rule_off) == Status.COMPLETED
        )

    def first_hand_completed(self, *, rule_off: bool = False) -> bool:
        return (
            self.expected_label == Attribution.DIRECT
            and self.final_status(rule_off=rule_off) == Status.COMPLETED
        )


@dataclass(frozen=True, slots=True)
class EvalReport:
    model: str
    base_url: str
    prompt_version: str
    started_at: str
    outcomes: tuple[CaseOutcome, ...]
    ledger_requests: int
    skipped: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        outcomes = self.outcomes
        total = len(outcomes)
        sent = [o for o in outcomes if o.requests_sent > 0]
        latencies = sorted(o.latency_s for o in sent)
        calls = sum(o.requests_sent for o in outcomes)
        lowered = [o for o in outcomes if o.lowered_by]
        return {
            "cases": total,
            "skipped": dict(self.skipped),
            "label_accuracy": share(sum(o.label_correct for o in outcomes), total),
            "source_accuracy": share(sum(o.source_correct for o in outcomes), total),
            "valid_answer_share": share(sum(o.valid for o in sent), len(sent)),
            **attribution_figures(outcomes),
            "lowered_by_evidence": {
                "total": len(lowered),
                "by_kind": counts(kind for o in lowered for kind in o.lowered_by),
            },
            "rule_off": attribution_figures(outcomes, rule_off=True),
            "confusion": confusion_matrix(outcomes),
            "model_calls": calls,
            "ledger_requests": self.ledger_requests,
            # the attribution call alone: cases that made exactly one call
            "max_attribution_prompt_tokens": max(
                (o.prompt_tokens for o in sent if o.requests_sent == 1), default=None
            ),
            "latency_s": _latency(latencies, calls),
            "tokens": {
                "prompt": sum(o.prompt_tokens for o in outcomes),
                "completion": sum(o.completion_tokens for o in outcomes),
                "usage_sources": counts(o.usage_source for o in sent),
            },
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "base_url": self.base_url,
            "prompt_version": self.prompt_version,
            "started_at": self.started_at,
            "summary": self.summary(),
            "cases": [asdict(o) for o in self.outcomes],
        }


def attribution_figures(
    outcomes: Sequence[CaseOutcome], *, rule_off: bool = False
) -> dict[str, Any]:
    """Misleading COMPLETED (with case ids), first-hand recall and the statuses, with the
    evidence rule as it ran or, with ``rule_off``, as if it had not lowered anything."""
    direct = [o for o in outcomes if o.expected_label == Attribution.DIRECT and o.within_limit]
    misleading = [o.id for o in outcomes if o.is_misleading(rule_off=rule_off)]
    return {
        "misleading_completed": len(misleading),
        "misleading_ids": misleading,
        "first_hand_recall": share(
            sum(o.first_hand_completed(rule_off=rule_off) for o in direct), len(direct)
        ),
        "first_hand_cases": len(direct),
        "statuses": counts(o.final_status(rule_off=rule_off) for o in outcomes),
    }


def confusion_matrix(outcomes: Sequence[CaseOutcome]) -> dict[str, dict[str, int]]:
    """Rows: the set's label. Columns: the model's label, or INVALID."""
    return confusion(LABELS, (*LABELS, INVALID), ((o.expected_label, o.label) for o in outcomes))


def _latency(latencies: Sequence[float], calls: int) -> dict[str, float | None]:
    """Seconds per investigation (wall clock, all its calls) and per model call."""
    if not latencies:
        return dict.fromkeys(
            ("per_investigation_mean", "per_investigation_median", "per_investigation_max"),
            None,
        ) | {"per_call_mean": None}
    return {
        "per_investigation_mean": _round(statistics.fmean(latencies)),
        "per_investigation_median": _round(statistics.median(latencies)),
        "per_investigation_max": _round(max(latencies)),
        "per_call_mean": _round(sum(latencies) / calls) if calls else None,
    }


def _round(value: float) -> float:
    return round(value, 3)


# --- running ---------------------------------------------------------------------------


def _publish_case(db: Database, case: EvalCase, index: int) -> str:
    """The case's incident, its named sources' reports and its own; the report id."""
    when = CASE_START + timedelta(hours=index)
    with db.session() as session:
        incident = Incident(id=new_id("inc"), name=f"Evaluation case {case.id}")
        session.add(incident)
        session.flush()
        for offset, name in enumerate(case.named_sources, start=1):
            text = case.named_source_texts.get(name) or (
                f"{name} entry about {case.person}, logged by its own staff."
            )
            publish_report(
                session,
                PublishReportInput(
                    incident_id=incident.id,
                    source=name,
                    summary=f"{name} entry about {case.person}",
                    original_text=text,
                    reported_at=when + timedelta(minutes=offset),
                    person=PersonInput(name=case.person),
                    status=ClaimStatus.SAFE,
                ),
            )
        report = publish_report(
            session,
            PublishReportInput(
                incident_id=incident.id,
                source=case.source,
                summary=f"Evaluation report about {case.person}",
                original_text=case.text,
                reported_at=when + timedelta(minutes=30),
                person=PersonInput(name=case.person),
                status=ClaimStatus.SAFE,
            ),
        )
        return report.id


async def run_evaluation(
    cases: Sequence[EvalCase],
    model: ModelSettings,
    *,
    skipped: dict[str, int] | None = None,
    workdir: Path | None = None,
    provider_factory: Callable[[ProviderConfig], Provider] = build_provider,
    progress: Callable[[CaseOutcome], None] | None = None,
) -> EvalReport:
    """Investigate every case live, one after the other, and collect the outcomes.

    The database and ledger live in ``workdir`` (a temporary folder when ``None``), never
    in the app's own store. A fresh passphrase enables live checks for this run only.
    """
    with tempfile.TemporaryDirectory(prefix="trace-eval-") as scratch:
        folder = workdir if workdir is not None else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        engine = make_engine(f"sqlite:///{folder / 'eval.db'}")
        migrate(engine)
        db = Database(engine)
        # One throw-away ledger per block of cases: a ledger's cap is at most 1,000
        # requests, and each case may make two calls.
        ledger_paths: list[Path] = []

        def block_ledger() -> JsonFileLedger:
            return JsonFileLedger(ledger_paths[-1], cap=CASES_PER_LEDGER * 2)

        passphrase = secrets.token_urlsafe(24)
        service = InvestigationService(
            db,
            model=replace(model, passphrase=passphrase),
            ledger_factory=block_ledger,
            provider_factory=provider_factory,
        )
        started = datetime.now(UTC).isoformat(timespec="seconds")
        outcomes: list[CaseOutcome] = []
        try:
            for index, case in enumerate(cases):
                if index % CASES_PER_LEDGER == 0:
                    ledger_paths.append(folder / f"eval-model-usage-{len(ledger_paths)}.json")
                report_id = _publish_case(db, case, index)
                began = time.perf_counter()
                result = await service.investigate(report_id, passphrase)
                elapsed = time.perf_counter() - began
                outcome = CaseOutcome(
                    id=case.id,
                    expected_label=case.label,
                    expected_source=case.referenced_source,
                    status=result.status.value,
                    label=result.attribution or INVALID,
                    referenced_source=result.referenced_source,
                    support=result.support,
                    requests_sent=result.requests_sent,
                    latency_s=round(elapsed, 3),
                    prompt_tokens=result.usage.prompt_tokens,
                    completion_tokens=result.usage.completion_tokens,
                    usage_source=result.usage.source,
                    saved=result.saved,
                    reason=result.reason,
                    lowered_by=result.lowered_by,
                    cue_kinds=tuple(sorted({cue.kind.value for cue in result.evidence})),
                    text_characters=len(case.text) if case.text.strip() else 0,
                )
                outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
            requests = sum(
                JsonFileLedger(path, cap=CASES_PER_LEDGER * 2).snapshot().requests
                for path in ledger_paths
                if path.exists()
            )
        finally:
            db.dispose()
    return EvalReport(
        model=model.model,
        base_url=model.base_url,
        prompt_version=model.prompt_version,
        started_at=started,
        outcomes=tuple(outcomes),
        ledger_requests=requests,
        skipped=dict(skipped or {}),
    )


# --- output ----------------------------------------------------------------------------


def render_text(report: EvalReport, *, rule_off: bool = False) -> str:
    """The summary as plain text for a terminal (the JSON file holds the same figures).
    ``rule_off`` adds the same attribution figures without the evidence rule."""
    s = report.summary()
    width = max(len(c) for c in (*LABELS, INVALID)) + 2
    columns = (*LABELS, INVALID)
    lines = [
        f"model {report.model} at {report.base_url}, prompt {report.prompt_version}",
        f"cases {s['cases']}, model calls {s['model_calls']} "
        f"(ledger counted {s['ledger_requests']})",
    ]
    if s["skipped"]:
        lines.append(f"skipped {sum(s['skipped'].values())}: {s['skipped']}")
    lines += [
        "",
        "confusion (rows: expected label, columns: model's label)",
        *confusion_lines(s["confusion"], columns, "expected", width),
    ]
    latency = s["latency_s"]
    tokens = s["tokens"]
    lowered = s["lowered_by_evidence"]
    lines += [
        "",
        f"label accuracy        {percent(s['label_accuracy'])}",
        f"source accuracy       {percent(s['source_accuracy'])}",
        f"valid answers         {percent(s['valid_answer_share'])}",
        *_attribution_lines(s),
        f"lowered by evidence   {lowered['total']} COMPLETED -> NEEDS_REVIEW "
        f"(by kind {lowered['by_kind']})",
        f"latency per check     mean {latency['per_investigation_mean']} s, "
        f"median {latency['per_investigation_median']} s, "
        f"max {latency['per_investigation_max']} s; per call {latency['per_call_mean']} s",
        f"tokens                prompt {tokens['prompt']}, completion {tokens['completion']} "
        f"(usage from {tokens['usage_sources']}); attribution call at most "
        f"{s['max_attribution_prompt_tokens']} prompt tokens",
    ]
    if rule_off:
        lines += [
            "",
            "without the evidence rule (for comparison only; the app has no such switch)",
            *_attribution_lines(s["rule_off"]),
        ]
    return "\n".join(lines)


def _attribution_lines(figures: dict[str, Any]) -> list[str]:
    ids = figures["misleading_ids"]
    shown = ", ".join(ids[:20]) + (f", ... ({len(ids) - 20} more)" if len(ids) > 20 else "")
    return [
        f"misleading COMPLETED  {figures['misleading_completed']} "
        "(a report the set calls RELAY/UNCLEAR shown as first-hand)"
        + (f": {shown}" if ids else ""),
        f"first-hand recall     {percent(figures['first_hand_recall'])} "
        f"(DIRECT cases ending COMPLETED, of {figures['first_hand_cases']} within the limit)",
        f"statuses              {figures['statuses']}",
    ]


def write_json(report: EvalReport, path: Path) -> None:
    """Write the report atomically (temp file in the same folder, fsync, rename)."""
    _write_report(report.as_json(), path)
