"""A real Viano interpretation through the real embedded model server.

Whatever the model writes, the outcome must be one the spec allows for an answer that
came back (COMPLETED, or ERROR when validation rejected it), the round must be recorded
with the provider's usage, and the package must publish either an accepted, schema-valid
interpretation or a rejection report, never both and never a torn state. Which
statements the model made is not asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from modelgate.local_server import LocalModelServer
from viano_bug_analysis.analysis.interpreter import CaseInterpreter
from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import PackageStore

# One interpretation is 1-2 minutes on 2 shared CPU cores; leave room for a busy machine.
pytestmark = [pytest.mark.localmodel, pytest.mark.timeout(1200)]

REPO = Path(__file__).resolve().parents[2]
SCHEMA = (
    REPO
    / "src"
    / "viano_bug_analysis"
    / "analysis"
    / "schemas"
    / "case-interpretation-output-v1.schema.json"
)

REPORT = """# Export button does nothing on the second click

## Steps to reproduce
1. Open a saved map.
2. Press Export.
3. Press Export again after the first file is written.

## Expected behavior
Every press of Export writes a new file.

## Actual behavior
The second press shows no file and no message.
"""


def _config(server: LocalModelServer) -> GatewayConfig:
    """config/llm.local.toml as shipped, pointed at this test's server port (and with a
    longer wall clock, so that a busy test machine does not turn it into a timeout)."""
    shipped = GatewayConfig.load(REPO / "config" / "llm.local.toml")
    local = shipped.providers[0].model_copy(
        update={"base_url": server.base_url, "timeout_s": 900.0}
    )
    return shipped.model_copy(update={"providers": (local,)})


async def test_interpretation_through_the_embedded_model(
    tmp_path: Path, local_model_server: LocalModelServer
) -> None:
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    (imported,) = import_file("markdown", report, tmp_path / "pkg.zip", case_id="export-twice")
    store = PackageStore.init(tmp_path / "store")
    store.add(imported.path)
    CaseBuilder(store).build("export-twice", imported.package_id)
    config = _config(local_model_server)
    gateway = LLMGateway(config)
    try:
        result = await CaseInterpreter(store, gateway).interpret(
            "export-twice", imported.package_id
        )
    finally:
        await gateway.aclose()

    assert result.status.value in {"COMPLETED", "ERROR"}, result.error
    assert result.round_ref is not None
    current = store.current("export-twice", imported.package_id)
    assert current.generation == result.package_generation
    with current.open() as reader:
        manifest = reader.require_manifest()
        assert manifest.phase == "INTERPRETING_CASE"
        assert reader.read("original/report.md") == REPORT.encode("utf-8")
        round_record = json.loads(reader.read(result.round_ref))
        outcome = round_record["outcome"]
        assert outcome["sent"] is True
        assert outcome["provider"] == "local"
        assert round_record["configuration_fingerprint"] == config.fingerprint()

        if outcome["error"] is not None:  # the gateway refused the answer's shape
            assert result.status.value == "ERROR"
            assert outcome["error"]["code"] in {"malformed_answer", "out_of_set_answer"}
            assert outcome["raw_text"]  # what the model wrote is kept for audit
            assert "case_interpretation" not in manifest.pointers
            return
        assert outcome["model"] == local_model_server.model_alias
        assert outcome["usage"]["source"] == "provider"
        assert outcome["usage"]["prompt_tokens"] > 0

        if result.status.value == "COMPLETED":
            assert result.rejection_ref is None and not result.violations
            accepted = json.loads(reader.read(manifest.pointers["case_interpretation"]))
            body = accepted["interpretation"]  # the model's sections, in the wrapper
            assert set(body) == _schema_keys()
            jsonschema.validate(body, json.loads(SCHEMA.read_text(encoding="utf-8")))
            assert manifest.pointers["case_interpretation_summary"].endswith(".md")
        else:  # rejected: audit trail kept, nothing published
            assert result.violations and result.rejection_ref is not None
            assert "case_interpretation" not in manifest.pointers
            assert "case_interpretation_summary" not in manifest.pointers
            rejection = json.loads(reader.read(result.rejection_ref))
            assert rejection  # the rejection report is readable JSON


def _schema_keys() -> set[str]:
    return set(json.loads(SCHEMA.read_text(encoding="utf-8"))["properties"])


def test_viano_demo_from_an_empty_folder_completes_and_show_renders_it(tmp_path: Path) -> None:
    """`viano demo` with no --config, run where there is no config/llm.local.toml: the
    embedded configuration shipped in the package is used (it starts the embedded model
    on 127.0.0.1:8765), the real report's interpretation is COMPLETED and `viano show`
    prints its Markdown."""
    import os
    import subprocess
    import sys

    from modelgate.local_server import missing_runtime_modules

    if missing_runtime_modules():
        pytest.skip("local model runtime not installed")
    data = Path(os.environ.get("REAL_DATA_DIR") or REPO.parent / "shared" / "data")
    if not data.is_dir():
        pytest.skip(f"real data folder {data} not found")
    viano = Path(sys.executable).with_name("viano")
    env = {**os.environ, "REAL_DATA_DIR": str(data)}
    empty = tmp_path / "empty"
    empty.mkdir()
    demo = subprocess.run(
        [str(viano), "demo", "--workdir", str(empty / "run")],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=1100,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "configuration: the embedded default" in demo.stdout
    assert "outcome: COMPLETED" in demo.stdout, demo.stdout
    shown = subprocess.run(
        [str(viano), "show", str(empty / "run" / "store"), "bz-1389136", "supplied"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "# Case interpretation" in shown.stdout
