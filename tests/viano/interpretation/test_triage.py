"""`viano triage` (issue 39, item 3; ADR 0104) over real reports from ../shared/data,
through the real gateway with a scripted provider: every report imported, added, built
and interpreted with bounded concurrency, one table in three forms, and a second run (or
a run after a SIGKILL) that repeats no confirmed model call."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from triage_support import CatalogueModel, CatalogueServer, config_file, real_reports
from typer.testing import CliRunner

from viano_bug_analysis.cli import app
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import PackageStore
from viano_bug_analysis.triage import detect_format, expand_sources, run_triage
from viano_bug_analysis.triage.command import choose_concurrency
from viano_bug_analysis.triage.table import write_tables

pytestmark = pytest.mark.realdata
runner = CliRunner()

CONFIG = GatewayConfig.from_mapping(
    {
        "providers": [
            {
                "name": "catalogue",
                "base_url": "http://192.0.2.1:9/v1",
                "model": "catalogue-model",
                "max_output_tokens": 8192,
                "structured_output": "json_schema",
            }
        ],
        "retry": {"max_attempts": 1},
    }
)


def _sources(tmp_path: Path, real_data_dir: Path) -> Path:
    folder = real_reports(real_data_dir, tmp_path / "backlog", bugzilla=4, github=2)
    (folder / "notes.md").write_text(
        "# Export drops the name\n\n## Expected behavior\nThe file keeps the map's name.\n\n"
        "## Actual behavior\nThe file is called untitled.svg.\n",
        encoding="utf-8",
    )
    (folder / "strange.json").write_text('{"neither": "format"}', encoding="utf-8")
    return folder


async def _triage(folder: Path, store: PackageStore, model: CatalogueModel, out: Path):  # type: ignore[no-untyped-def]
    report = await run_triage(
        expand_sources([str(folder)]),
        store,
        lambda: LLMGateway(CONFIG, providers=[model]),
        concurrency=4,
        out=out,
    )
    write_tables(report, store)
    return report


async def test_triage_of_real_reports_then_a_second_run_calls_nothing(
    tmp_path: Path, real_data_dir: Path
) -> None:
    folder = _sources(tmp_path, real_data_dir)
    store = PackageStore.init(tmp_path / "store")
    model = CatalogueModel()
    out = tmp_path / "store" / "reports"
    report = await _triage(folder, store, model, out)
    counts = report.counts()
    assert counts.get("COMPLETED") == 7, [r.to_json() for r in report.rows]
    assert counts.get("FAILED") == 1
    (failed,) = [r for r in report.rows if r.status == "FAILED"]
    assert failed.error_code == "triage.format_unknown" and failed.source.endswith("strange.json")
    assert report.model_calls == 7 and sum(model.calls.values()) == 7
    # the three tables, a link to each interpretation, failures with their codes
    md = (out / "triage.md").read_text(encoding="utf-8")
    rows = list(csv.DictReader((out / "triage.csv").open(encoding="utf-8")))
    page = (out / "triage.html").read_text(encoding="utf-8")
    assert len(rows) == 8 and "## Failures" in md and "triage.format_unknown" in page
    completed = [r for r in rows if r["status"] == "COMPLETED"]
    for row in completed:
        assert (out / row["interpretation"]).is_file()
        assert row["gap"] in ("yes", "no") and row["stated expectation"] in ("yes", "no")
        assert row["investigation direction"]
        assert f'href="{row["interpretation"]}"' in page
    assert md.count("](interpretations/") == 7
    notes = next(r for r in report.rows if r.source.endswith("notes.md"))
    assert notes.stated_expectation is True and notes.behavior_gap is True

    again = await _triage(folder, store, model, out)
    assert again.model_calls == 0 and sum(model.calls.values()) == 7
    assert again.counts() == counts


def test_formats_are_detected_per_file(tmp_path: Path, real_data_dir: Path) -> None:
    folder = _sources(tmp_path, real_data_dir)
    found = {p.name: detect_format(p) for p in folder.iterdir() if p.name != "strange.json"}
    assert found["bug-000.json"] == "bugzilla"
    assert found["issues.jsonl"] == "github-issue"
    assert found["notes.md"] == "markdown"
    globbed = expand_sources([str(folder / "bug-*.json")])
    assert [s.path.name for s in globbed] == [f"bug-00{i}.json" for i in range(4)]


def test_the_embedded_model_gets_one_request_at_a_time() -> None:
    assert choose_concurrency(GatewayConfig.embedded(), None)[0] == 1
    assert choose_concurrency(GatewayConfig.embedded(), 8) == (
        1,
        "the embedded model answers one request at a time",
    )
    assert choose_concurrency(CONFIG, None) == (4, None)
    assert choose_concurrency(CONFIG, 8) == (8, None)


def test_the_command_interface(tmp_path: Path, real_data_dir: Path) -> None:
    folder = real_reports(real_data_dir, tmp_path / "backlog", bugzilla=2, github=1)
    with CatalogueServer() as server:
        config = config_file(tmp_path, server.base_url)
        args = ["triage", str(folder / "*.json*"), "--store", str(tmp_path / "s")]
        args += ["--config", str(config), "--concurrency", "2", "--out", str(tmp_path / "t")]
        result = runner.invoke(app, [*args, "--json"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        assert payload["status"] == "triaged" and payload["counts"] == {"COMPLETED": 3}
        assert payload["model_calls"] == 3 and server.total() == 3
        for name in ("triage.md", "triage.csv", "triage.html"):
            assert (tmp_path / "t" / name).is_file()
        # the default output folder is reports/ in the store; nothing is asked again
        plain = runner.invoke(app, [*args[:4], "--config", str(config)])
        assert plain.exit_code == 0, plain.output
        assert (tmp_path / "s" / "reports" / "triage.md").is_file()
        assert server.total() == 3
    bad = runner.invoke(app, ["triage", str(tmp_path / "nothing-*.md"), "--store", "x", "--json"])
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["code"] == "triage.no_input"


_CHILD = "import sys; from viano_bug_analysis.cli import app; sys.argv[0] = 'viano'; app()"


def _rounds_on_disk(store_root: Path) -> bool:
    """Whether a generation file holds a recorded round (read-only: no store is opened,
    so nothing is repaired under the running child)."""
    for path in (store_root / "packages").glob("*/*/gen-*.zip"):
        try:
            with zipfile.ZipFile(path) as z:
                if any("/rounds/" in name for name in z.namelist()):
                    return True
        except (OSError, zipfile.BadZipFile):
            continue
    return False


def _confirmed(store_root: Path) -> set[str]:
    """Cases whose gateway round is recorded in the store (a confirmed call)."""
    store = PackageStore.open(store_root)
    found = set()
    for row in store.list_packages():
        with store.current(str(row["case_id"]), str(row["package_id"])).open() as reader:
            if any("/rounds/" in name for name in reader.names()):
                found.add(str(row["case_id"]))
    return found


def test_a_sigkill_in_the_middle_repeats_no_confirmed_call(
    tmp_path: Path, real_data_dir: Path
) -> None:
    folder = real_reports(real_data_dir, tmp_path / "backlog", bugzilla=6, github=0)
    store_root = tmp_path / "store"
    with CatalogueServer(delay_s=0.3) as server:
        config = config_file(tmp_path, server.base_url)
        command = [sys.executable, "-c", _CHILD, "triage", str(folder), "--store"]
        command += [str(store_root), "--config", str(config), "--concurrency", "2", "--json"]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            sum(server.answered.values()) >= 3 and _rounds_on_disk(store_root)
        ):
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        confirmed = _confirmed(store_root)
        first = dict(server.calls)
        assert confirmed and len(confirmed) < 6, (confirmed, first)

        rerun = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        payload = json.loads(rerun.stdout)
        assert payload["counts"] == {"COMPLETED": 6}
        second = {k: v - first.get(k, 0) for k, v in server.calls.items()}
        repeated = {case for case, n in second.items() if n and case in confirmed}
        assert repeated == set(), (confirmed, first, second)
        assert payload["model_calls"] == sum(second.values()) == 6 - len(confirmed)
