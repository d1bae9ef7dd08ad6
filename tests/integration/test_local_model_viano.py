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
            body = {k: v for k, v in accepted.items() if k in _schema_keys()}
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
