"""tools/check_docs.py, the docs check of ``make lint`` (issue 38, build item 4): it
finds each kind of name that does not exist, and passes the ones that do."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOC = ROOT / "docs" / "trace.md"


@pytest.fixture(scope="module")
def docs_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_docs", ROOT / "tools" / "check_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_docs"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("trace pfif import FILE --incident ID --bogus", "has no option --bogus"),
        ("trace frobnicate", "no subcommand 'frobnicate'"),
        ("trace user create|role|nope", "no subcommand 'nope'"),
        ("viano eval CASE_FOLDER --json", "`viano eval` has no option --json"),
        ("viano demo --json", "`viano demo` has no option --json"),
        (".venv/bin/trace serve --demo --nope", "has no option --nope"),
        ("make lint nosuchtarget", "no target 'nosuchtarget'"),
        ("python bench/bench_nope.py", "no such script"),
        ("python bench/bench_pfif.py --no-such-flag", "has no option --no-such-flag"),
        ("echo x | trace user create ada --role admin --password-stdin --x", "no option --x"),
    ],
)
def test_a_wrong_command_is_found(docs_check: ModuleType, line: str, why: str) -> None:
    found = docs_check.check_command(line)
    assert found is not None and why in found


@pytest.mark.parametrize(
    "line",
    [
        "trace pfif import FILE --incident ID_OR_NAME [--skip-invalid] [--dry-run]",
        "trace user create|role|password|disable|list",
        "trace token list | trace token revoke ID",
        "trace serve [--host 127.0.0.1] [--port 8000]",
        "trace eval --crisislex data/*.csv --rule-off",
        "viano import <format>",
        "viano interpret STORE CASE PACKAGE --config FILE --attempt-id after-outage --resume",
        "make test PYTEST_WORKERS=0",
        "DATABASE_URL=sqlite:///x.db trace incident list  # a comment --nope",
    ],
)
def test_a_right_command_passes(docs_check: ModuleType, line: str) -> None:
    assert docs_check.check_command(line) is None


@pytest.mark.parametrize(
    ("span", "wrong"),
    [
        ("src/trace_app/cli.py", False),
        ("src/trace_app/nope.py", True),
        ("domain/identity.py", False),  # relative to a package
        ("domain/nope.py", True),
        ("bench/bench_*.py", False),
        ("bench/nope_*.py", True),
        ("pfif_mapping.py", False),
        ("nope_module.py", True),
        ("investigation/panel.html", False),  # a template's name
        ("original/intake.json", False),  # a path inside a package ZIP: not checked
        ("domain/person_view.py: current_status", False),
        ("domain/person_view.py: no_such_function", True),
        ("trace_app.domain.reviews.latest_review", False),
        ("trace_app.domain.reviews.no_such_name", True),
        ("trace_app.no_such_module", True),
        ("web.deps.render(request, context)", False),
        ("identity.no_such_rule", True),
        ("PackageStore.open", False),
        ("PackageStore.no_such_method", True),
        ("store.add(path)", False),  # an instance named after its class
        ("alerts.joined_alert_id", False),  # a table's column
        ("package.corrupt", False),  # a code, written as a string in the source
        ("os.replace", False),
        ("--skip-invalid", False),
        ("--no-such-option", True),
        ("TRACE_DEMO", False),
        ("TRACE_NO_SUCH_SETTING=1", True),
        ("make help", False),
        ("POST /api/incidents/{id}/pfif?dry_run=true", False),
        ("GET /api/incidents/{incident_id}/people?q=&status=", False),
        ("/api/me", False),
        ("GET /api/no/such/route", True),
        ("DELETE /api/me", True),
    ],
)
def test_each_kind_of_name(docs_check: ModuleType, span: str, wrong: bool) -> None:
    assert (docs_check.check_span(span, DOC) is not None) is wrong


def test_python_blocks_and_links(docs_check: ModuleType) -> None:
    good = "from viano_bug_analysis.analysis import CaseInterpreter"
    assert docs_check.check_python_line(good) is None
    assert docs_check.check_python_line("from trace_app.domain import NoSuchThing") is not None
    assert docs_check.check_link("docs/trace.md#accounts-and-access", README) is None
    assert docs_check.check_link("docs/nope.md", README) is not None
    assert docs_check.check_link("https://example.org/x", README) is None


def test_the_allowlist_gives_a_reason_for_each_entry(docs_check: ModuleType) -> None:
    lines = [
        line
        for line in docs_check.ALLOWLIST.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert 0 < len(lines) <= 25
    for line in lines:
        doc, span, why = line.split(" | ", 2)
        assert (ROOT / doc).is_file() and span.startswith("`") and len(why) > 10, line


def test_what_a_document_names_is_found(docs_check: ModuleType, tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "Run `trace ledger` and see [the guide](guide.md).\n"
        "```sh\ntrace pfif import FILE --incident ID  # a comment\n```\n"
        "```\nsrc/trace_app/   the app\n```\n"
        "```python\nfrom trace_app.domain import publish_report\n```\n",
        encoding="utf-8",
    )
    assert list(docs_check.scan(doc)) == [
        (1, "trace ledger", "code"),
        (1, "guide.md", "link"),
        (3, "trace pfif import FILE --incident ID  # a comment", "shell"),
        (6, "src/trace_app/", "code"),
        (9, "from trace_app.domain import publish_report", "python"),
    ]
