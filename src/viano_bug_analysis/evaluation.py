"""``viano eval``: run labelled bug reports through the real import, build and interpretation.

A case set is a folder with ``cases.jsonl`` (one JSON object per line) and the report
files it names (see docs/evaluation.md)::

    {"id": "...", "file": "export-twice.md", "format": "markdown", "behavior_gap": true}

or, for a real report kept outside the repository, the data file (relative to the real
data folder: ``REAL_DATA_DIR``, else ``../shared/data``) and the record's ``id`` in it;
the record's line is read from there at run time, never copied into the case set::

    {"id": "...", "data": "bug_reports/bugbug/bugs.json", "record": 1389136,
     "format": "bugzilla", "behavior_gap": false}

``behavior_gap`` is the label: true when the report states both what should happen and
what happens instead, so a behaviour gap can be justified from its sources; false when it
does not, so a stated gap would be invented. Each case is imported into a throw-away
store, built with CaseBuilder and interpreted by CaseInterpreter with the configured
gateway, exactly as ``viano interpret`` does. This module decides nothing; it reads the
outcome, the recorded round and the published (or rejected) interpretation, and counts.

Figures: outcomes (COMPLETED / ERROR / other), the share of answers that passed the
gateway's schema check, the share accepted by the reference validation, a confusion
matrix of the label against whether the schema-valid answer stated a gap, rule
violations by rule, *misleading* outcomes (a no-gap case published COMPLETED with a gap),
latency and tokens per call.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from modelgate.evaluation_report import confusion, confusion_lines, counts, percent, share
from modelgate.evaluation_report import write_report as _write_report
from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.errors import VianoError

CASES_FILE = "cases.jsonl"
GAP, NO_GAP, INVALID = "GAP", "NO_GAP", "INVALID"
REFUSED = "REFUSED"  # an InterpretationError before anything was sent (e.g. context_window)


class EvalCaseError(VianoError):
    """The case set is missing, or a line of it is not a usable case."""

    code = "eval.case_invalid"


@dataclass(frozen=True, slots=True)
class VianoCase:
    """One labelled report: a ``file`` of the case set, or line ``record`` (its JSON
    ``id``) of the real data file ``file`` (``record`` is then not None)."""

    id: str
    file: Path
    format: str
    behavior_gap: bool
    record: int | str | None = None

    def report(self, folder: Path) -> Path:
        """The report file to import: the case set's own, or the record's line of the
        real data file written to ``folder``."""
        if self.record is None:
            return self.file
        return extract_record(self.file, self.record, folder / f"{self.id}.json")


def extract_record(source: Path, record: int | str, target: Path) -> Path:
    """Copy the JSON line of ``source`` whose ``id`` is ``record`` to ``target``, byte
    for byte."""
    try:
        with source.open("rb") as lines:
            for line in lines:
                if line.strip() and json.loads(line).get("id") == record:
                    target.write_bytes(line.rstrip(b"\r\n"))
                    return target
    except (OSError, ValueError) as exc:
        raise EvalCaseError(f"cannot read records from {source}: {exc}") from None
    raise EvalCaseError(f"record {record!r} is not in {source}")


_FILE_KEYS = {"id", "file", "format", "behavior_gap"}
_DATA_KEYS = {"id", "data", "record", "format", "behavior_gap"}


def load_cases(folder: Path, data_dir: Path | None = None) -> list[VianoCase]:
    """The cases of ``folder/cases.jsonl``. A named file must exist in ``folder``; a
    ``data`` file must exist in ``data_dir`` (default: the real data folder)."""
    from viano_bug_analysis.intake import IMPORT_FORMATS

    path = folder / CASES_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvalCaseError(f"cannot read {path}: {exc.strerror}") from None
    cases: list[VianoCase] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalCaseError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(data, dict) or (set(data) - _FILE_KEYS and set(data) - _DATA_KEYS):
            raise EvalCaseError(
                f"{where}: a case has id, format, behavior_gap and either file, or data and record"
            )
        if not isinstance(data.get("behavior_gap"), bool):
            raise EvalCaseError(f"{where}: behavior_gap must be true or false")
        if data.get("format") not in IMPORT_FORMATS:
            raise EvalCaseError(f"{where}: format must be one of {sorted(IMPORT_FORMATS)}")
        record = data.get("record")
        if "data" in data:
            if not isinstance(record, int | str) or isinstance(record, bool):
                raise EvalCaseError(f"{where}: record must be the record's id")
            if data_dir is None:
                from viano_bug_analysis.demo_data import real_data_dir

                try:
                    data_dir = real_data_dir()
                except VianoError as exc:
                    raise EvalCaseError(f"{where}: {exc.message}") from None
            file = data_dir / str(data["data"])
            if not file.is_file() or data_dir.resolve() not in file.resolve().parents:
                raise EvalCaseError(f"{where}: {file} is not a file in {data_dir}")
        else:
            file = folder / str(data.get("file", ""))
            if not file.is_file() or file.resolve().parent != folder.resolve():
                raise EvalCaseError(f"{where}: {file} is not a file in {folder}")
        cases.append(
            VianoCase(
                str(data.get("id") or where),
                file,
                data["format"],
                data["behavior_gap"],
                record if "data" in data else None,
            )
        )
    if not cases:
        raise EvalCaseError(f"{path}: no cases")
    return cases


@dataclass(frozen=True, slots=True)
class VianoOutcome:
    id: str
    expected_gap: bool
    status: str
    schema_valid: bool  # the answer passed the gateway's schema check
    stated_gap: bool | None  # None when no schema-valid answer came back
    violations: dict[str, int]
    error_code: str | None
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    report_chars: int = 0
    answer_chars: int = 0
    malformed: str | None = None  # malformed_answer: malformed_cause()

    @property
    def label(self) -> str:
        if self.stated_gap is None:
            return INVALID
        return GAP if self.stated_gap else NO_GAP

    @property
    def cites_outside_catalogue(self) -> bool:
        """The answer cited an id that is not in its context's catalogue."""
        return bool(
            self.violations.get("unknown_source") or self.violations.get("entity_not_entity")
        )

    @property
    def misleading(self) -> bool:
        """A report with no stated expectation, published with a behaviour gap."""
        return not self.expected_gap and self.status == "COMPLETED" and bool(self.stated_gap)


@dataclass(frozen=True, slots=True)
class VianoEvalReport:
    model: str
    started_at: str
    outcomes: tuple[VianoOutcome, ...]

    def summary(self) -> dict[str, Any]:
        outcomes = self.outcomes
        total = len(outcomes)
        matrix = confusion(
            (GAP, NO_GAP),
            (GAP, NO_GAP, INVALID),
            ((GAP if o.expected_gap else NO_GAP, o.label) for o in outcomes),
        )
        violations: Counter[str] = Counter()
        for o in outcomes:
            violations.update(o.violations)
        answered = [o for o in outcomes if o.schema_valid]
        return {
            "cases": total,
            "outcomes": counts(o.status for o in outcomes),
            "schema_valid_share": share(len(answered), total),
            "accepted_share": share(sum(o.status == "COMPLETED" for o in outcomes), total),
            "gap_label_accuracy": share(
                sum(o.label == (GAP if o.expected_gap else NO_GAP) for o in outcomes), total
            ),
            "confusion": matrix,
            "misleading_completed": sum(o.misleading for o in outcomes),
            "answers_citing_outside_catalogue": sum(o.cites_outside_catalogue for o in outcomes),
            "violations_by_rule": dict(violations.most_common()),
            "latency_s_per_call_mean": _share_float(sum(o.latency_s for o in outcomes), total),
            "latency_s_per_call_median": (
                round(statistics.median(o.latency_s for o in outcomes), 3) if outcomes else None
            ),
            "tokens": {
                "prompt": sum(o.prompt_tokens for o in outcomes),
                "completion": sum(o.completion_tokens for o in outcomes),
            },
            "malformed_causes": dict(Counter(o.malformed for o in outcomes if o.malformed)),
            "refused_for_size": sum(
                o.error_code in SIZE_REFUSALS
                or (o.status == "ERROR" and o.error_code == "rejected")
                for o in outcomes
            ),
            "by_length": {
                name: _band([o for o in outcomes if length_band(o.report_chars) == name])
                for _, _, name in LENGTH_BANDS
            },
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "started_at": self.started_at,
            "summary": self.summary(),
            "cases": [asdict(o) for o in self.outcomes],
        }


# a request the provider refused (HTTP 4xx: a prompt over the window) or one the gateway
# or the interpreter refused for its size
SIZE_REFUSALS = frozenset({"request_too_large", "interpretation.limit.context_window"})


def _band(outcomes: list[VianoOutcome]) -> dict[str, Any]:
    return {
        "cases": len(outcomes),
        "accepted": sum(o.status == "COMPLETED" for o in outcomes),
        "accepted_share": share(sum(o.status == "COMPLETED" for o in outcomes), len(outcomes)),
        "misleading_completed": sum(o.misleading for o in outcomes),
        "outcomes": counts(o.status for o in outcomes),
        "latency_s_median": (
            round(statistics.median(o.latency_s for o in outcomes), 3) if outcomes else None
        ),
    }


def _share_float(part: float, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


GatewayFactory = Callable[[Any], Any]


def _default_gateway(config: Any) -> Any:
    from viano_bug_analysis.llm import LLMGateway

    return LLMGateway(config)


async def _run_case(
    case: VianoCase, folder: Path, config: Any, gateway_factory: GatewayFactory
) -> VianoOutcome:
    from viano_bug_analysis.analysis.interpreter import CaseInterpreter
    from viano_bug_analysis.case import CaseBuilder
    from viano_bug_analysis.intake import import_file
    from viano_bug_analysis.packages import PackageStore

    report = case.report(folder)
    (imported,) = import_file(case.format, report, folder / f"{case.id}.zip", case_id=case.id)
    store = PackageStore.init(folder / f"{case.id}-store")
    store.add(imported.path)
    CaseBuilder(store).build(case.id, imported.package_id)
    chars = report_chars(report, case.format)
    gateway = gateway_factory(config)
    started = time.perf_counter()
    try:
        result = await CaseInterpreter(store, gateway).interpret(case.id, imported.package_id)
    except InterpretationError as exc:
        # refused before anything was sent (the context cannot fit the model's window,
        # a limit): an outcome of its own, never a crash of the evaluation
        return VianoOutcome(
            id=case.id,
            expected_gap=case.behavior_gap,
            status=REFUSED,
            schema_valid=False,
            stated_gap=None,
            violations={},
            error_code=exc.code,
            latency_s=round(time.perf_counter() - started, 3),
            prompt_tokens=0,
            completion_tokens=0,
            report_chars=chars,
        )
    finally:
        await gateway.aclose()
    elapsed = time.perf_counter() - started
    outcome: dict[str, Any] = {}
    if result.round_ref is not None:
        with store.current(case.id, imported.package_id).open() as reader:
            outcome = json.loads(reader.read(result.round_ref)).get("outcome") or {}
    output = outcome.get("output")
    usage = outcome.get("usage") or {}
    error = result.error or outcome.get("error")
    error_code = error.get("code") if isinstance(error, dict) else None
    return VianoOutcome(
        id=case.id,
        expected_gap=case.behavior_gap,
        status=result.status.value,
        schema_valid=isinstance(output, dict),
        stated_gap=(output.get("behavior_gap") is not None) if isinstance(output, dict) else None,
        violations=dict(Counter(v["rule"] for v in result.violations)),
        error_code=error_code,
        latency_s=round(float(outcome.get("latency_s") or elapsed), 3),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        report_chars=chars,
        answer_chars=len(outcome.get("raw_text") or ""),
        malformed=(
            malformed_cause(
                outcome.get("raw_text") or "",
                int(usage.get("completion_tokens") or 0),
                gateway.max_output_tokens,
            )
            if error_code == "malformed_answer"
            else None
        ),
    )


CUT_AT_LIMIT = "cut_at_token_limit"
RAW_CONTROL_CHARACTER = "raw_control_character"


def malformed_cause(raw_text: str, completion_tokens: int, max_output_tokens: int) -> str:
    """Why an answer was not JSON, read from its recorded round: cut off at the token
    limit (it used them all), a raw control character inside a string (it parses once
    those are allowed), or something else."""
    try:
        json.loads(raw_text, strict=False)
    except ValueError:
        return CUT_AT_LIMIT if completion_tokens >= max_output_tokens else "other"
    return RAW_CONTROL_CHARACTER


_TEXT_KEYS = frozenset({"summary", "title", "body", "text", "description"})


def report_chars(path: Path, fmt: str) -> int:
    """The length of a report in characters, for the length bands: a Markdown report's
    whole text; for a JSON report (Bugzilla, GitHub, native intake) the strings under
    ``summary``, ``title``, ``body``, ``text`` and ``description`` at any depth (title,
    description and comments, not metadata)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if fmt == "markdown":
        return len(text)
    total = 0

    def walk(value: Any, key: str | None) -> None:
        nonlocal total
        if isinstance(value, str):
            total += len(value) if key in _TEXT_KEYS else 0
        elif isinstance(value, list):
            for item in value:
                walk(item, key if key == "comments" else None)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))

    try:
        walk(json.loads(text), None)
    except ValueError:
        return len(text)
    return total


# length bands of the figures (characters of the report, ``report_chars``)
LENGTH_BANDS = ((0, 2000, "<2,000"), (2000, 6000, "2,000-6,000"), (6000, None, ">6,000"))


def length_band(chars: int) -> str:
    for low, high, name in LENGTH_BANDS:
        if chars >= low and (high is None or chars < high):
            return name
    return LENGTH_BANDS[-1][2]


def run_evaluation(
    cases: Sequence[VianoCase],
    config: Any,
    *,
    progress: Callable[[VianoOutcome], None] | None = None,
    gateway_factory: GatewayFactory = _default_gateway,
) -> VianoEvalReport:
    """Interpret every case in a throw-away folder, one after the other.

    ``gateway_factory`` builds the ``LLMGateway`` for each case (tests pass one whose
    provider is scripted; it takes the same gateway path)."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    outcomes: list[VianoOutcome] = []
    with tempfile.TemporaryDirectory(prefix="viano-eval-") as scratch:
        for case in cases:
            outcome = asyncio.run(_run_case(case, Path(scratch), config, gateway_factory))
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    return VianoEvalReport(
        model=config.providers[0].model, started_at=started, outcomes=tuple(outcomes)
    )


def render_text(report: VianoEvalReport) -> str:
    s = report.summary()
    columns = (GAP, NO_GAP, INVALID)
    lines = [
        f"model {report.model}; cases {s['cases']}; outcomes {s['outcomes']}",
        "",
        "behaviour gap (rows: label, columns: the schema-valid answer)",
        *confusion_lines(s["confusion"], columns, "label", 10),
    ]
    lines += [
        "",
        f"schema-valid answers  {percent(s['schema_valid_share'])}",
        f"accepted (COMPLETED)  {percent(s['accepted_share'])}",
        f"gap label accuracy    {percent(s['gap_label_accuracy'])}",
        f"misleading COMPLETED  {s['misleading_completed']} (no stated expectation, gap published)",
        f"citing outside        {s['answers_citing_outside_catalogue']} answers (an id not in "
        "the catalogue)",
        f"violations by rule    {s['violations_by_rule']}",
        f"latency per call      {s['latency_s_per_call_mean']} s mean, "
        f"{s['latency_s_per_call_median']} s median",
        f"tokens                prompt {s['tokens']['prompt']}, "
        f"completion {s['tokens']['completion']}",
        f"refused for size      {s['refused_for_size']} (provider 4xx or over a limit)",
        f"not JSON, by cause    {s['malformed_causes']}",
        "",
        "by report length (characters): cases, accepted, misleading, median latency",
    ]
    for name, band in s["by_length"].items():
        lines.append(
            f"  {name:<12} {band['cases']:>3} cases, accepted {band['accepted']} "
            f"({percent(band['accepted_share'])}), misleading {band['misleading_completed']}, "
            f"median {band['latency_s_median']} s, {band['outcomes']}"
        )
    return "\n".join(lines)


def write_json(report: VianoEvalReport, path: Path) -> None:
    """Atomically: temp file in the same folder, fsync, rename."""
    _write_report(report.as_json(), path)
