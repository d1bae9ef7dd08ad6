"""The whole flow against a real OpenAI-compatible HTTP server on 127.0.0.1.

The stub counts every upstream request: 1 or 2 per live investigation, 0 for cached,
replayed, refused and partial-before-call cases. Each request body is checked for
temperature 0, the 96-token limit and the reasoning-off field (Nemotron only). The app,
the CLI and the provider adapters are the real ones; only the model is a stub.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import member_of, signed_in_with
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from modelgate.testing import StubChatServer, StubResponse
from trace_app.cli import app as trace_cli
from trace_app.demo.data import COMMUNITY_RELAY, POLICE, POLICE_REPORT
from trace_app.investigation.model_settings import LITELLM_PREFIX, NEMOTRON_MODEL
from trace_app.settings import TraceSettings
from trace_app.web.app import create_app

from .conftest import PASSPHRASE

REASONING_OFF = {"enable_thinking": False}
OTHER_KEY = "sk-local-test-key"


def answer(payload: dict[str, str], **usage: Any) -> StubResponse:
    return StubResponse.answer(json.dumps(payload), **usage)


class Live:
    def __init__(self, http: TestClient, stub: StubChatServer) -> None:
        self.http = http
        self.stub = stub

    def report_id(self, source: str, text: str) -> str:
        incident = self.http.get("/api/incidents").json()["items"][0]["id"]
        reports = self.http.get(f"/api/incidents/{incident}/reports", params={"limit": 500}).json()[
            "items"
        ]
        return next(
            r["id"] for r in reports if r["source"] == source and r["original_text"] == text
        )

    def investigate(self, report_id: str, passphrase: str | None = PASSPHRASE) -> Any:
        body = {} if passphrase is None else {"passphrase": passphrase}
        response = self.http.post(f"/api/reports/{report_id}/investigate", json=body)
        assert response.status_code == 200, response.text
        return response.json()

    def counted(self) -> int:
        value: int = self.http.get("/api/ledger").json()["requests"]
        return value


def check_body(seen: Any, model: str, *, reasoning_off: bool) -> dict[str, Any]:
    body: dict[str, Any] = seen.json()
    assert body["model"] == model
    assert body["temperature"] == 0
    assert body["max_tokens"] == 96
    if reasoning_off:
        assert body["chat_template_kwargs"] == REASONING_OFF
    else:
        assert "chat_template_kwargs" not in body
    return body


def estimate_of(sent: list[Any]) -> int:
    """The documented estimate over requests as they reached the server: input characters
    (every message's content) / 4 + 150 prompt tokens, plus 16 completion tokens each."""
    return sum(
        sum(len(m["content"]) for m in seen.json()["messages"]) // 4 + 150 + 16 for seen in sent
    )


@pytest.fixture
def stub() -> Iterator[StubChatServer]:
    with StubChatServer() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("TRACE_HOME", str(home))
    return home


def live_app(stub: StubChatServer, monkeypatch: pytest.MonkeyPatch, model: str) -> TestClient:
    monkeypatch.setenv("TRACE_MODEL_BASE_URL", stub.base_url)
    monkeypatch.setenv("TRACE_MODEL", model)
    monkeypatch.setenv("TRACE_DEMO", "1")  # the tests reset the demo through the API
    app = create_app(TraceSettings.from_env())
    return signed_in_with(app, base_url="http://127.0.0.1", follow_redirects=True)


def test_live_cached_refused_partial_and_replayed_over_real_http(
    stub: StubChatServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = tmp_path / "recorded_investigations.json"
    monkeypatch.setenv("TRACE_RECORDED_INVESTIGATIONS", str(recorded))
    monkeypatch.setenv("TRACE_MODEL_API_KEY", OTHER_KEY)
    with live_app(stub, monkeypatch, NEMOTRON_MODEL) as http:
        live = Live(http, stub)
        police = live.report_id(POLICE, POLICE_REPORT.text)
        relay = live.report_id(COMMUNITY_RELAY.source, COMMUNITY_RELAY.text)

        # LIVE, one call; the family's words ("They say") keep a DIRECT label from completing
        stub.add(answer({"attribution": "DIRECT", "referenced_source": "NONE"}))
        result = live.investigate(police)
        assert (result["status"], result["mode"], stub.count) == ("NEEDS_REVIEW", "LIVE", 1)
        assert result["lowered_by_evidence"] == ["hearsay"]
        body = check_body(stub.requests[0], NEMOTRON_MODEL, reasoning_off=True)
        assert body["response_format"]["type"] == "json_schema"
        assert stub.requests[0].headers["Authorization"] == f"Bearer {OTHER_KEY}"
        assert result["usage"] == {
            "prompt_tokens": 11,
            "completion_tokens": 7,
            "estimated_tokens": estimate_of(stub.requests[:1]),
            "source": "provider",
        }
        assert OTHER_KEY not in json.dumps(result)

        # CACHED, no call and no passphrase
        assert live.investigate(police, passphrase=None)["mode"] == "CACHED"
        assert http.get(f"/api/reports/{police}/investigation").status_code == 200
        assert stub.count == 1

        # refused: wrong passphrase, nothing sent
        assert live.investigate(relay, passphrase="nope")["status"] == "UNAVAILABLE"
        assert stub.count == 1

        # LIVE, two calls: the relay is compared with the police report
        stub.add(
            answer({"attribution": "RELAY", "referenced_source": POLICE}),
            answer({"support": "SUPPORTS"}),
        )
        result = live.investigate(relay)
        assert (result["status"], result["support"], stub.count) == ("NEEDS_REVIEW", "SUPPORTS", 3)
        assert result["usage"]["estimated_tokens"] == estimate_of(stub.requests[1:3])
        for seen in stub.requests[1:]:
            check_body(seen, NEMOTRON_MODEL, reasoning_off=True)
        assert live.counted() == 3

        # PARTIAL before any call: text over 3,000 characters
        incident = http.get("/api/incidents").json()["items"][0]["id"]
        camp = member_of(http.app, "Tatopani Relief Camp Demo", base_url="http://127.0.0.1")
        long_id = camp.post(
            "/api/reports",
            json={
                "incident_id": incident,
                "source": "Tatopani Relief Camp Demo",
                "summary": "long",
                "original_text": "z" * 3001,
                "reported_at": "2026-09-27T06:00:00Z",
                "person": {"name": "Maya Gurung", "age": 24},
                "status": "seen",
            },
        ).json()["id"]
        assert live.investigate(long_id)["status"] == "PARTIAL"
        assert stub.count == 3

        # an HTTP 500 is FAILED after exactly one request (no retries), and counted
        stub.add(StubResponse(status=500, body={"error": "boom"}))
        other = live.report_id(POLICE, POLICE_REPORT.text)
        http.post("/api/demo/reset", json={})
        other = live.report_id(POLICE, POLICE_REPORT.text)
        failed = live.investigate(other)
        assert (failed["status"], stub.count, live.counted()) == ("FAILED", 4, 4)

    # record-demo through the CLI, against the same server: 1 + 2 + 1 calls
    stub.add(
        answer({"attribution": "RELAY", "referenced_source": "NONE"}),
        answer({"attribution": "RELAY", "referenced_source": POLICE}),
        answer({"support": "SUPPORTS"}),
        answer({"attribution": "RELAY", "referenced_source": "NONE"}),
    )
    monkeypatch.setenv("TRACE_MODEL_BASE_URL", stub.base_url)
    monkeypatch.setenv("TRACE_MODEL", NEMOTRON_MODEL)
    outcome = CliRunner().invoke(trace_cli, ["record-demo", "--output", str(recorded)])
    assert outcome.exit_code == 0, outcome.output
    assert stub.count == 8
    assert PASSPHRASE not in outcome.output and PASSPHRASE not in recorded.read_text()

    # REPLAYED after reset: no call, no passphrase
    with live_app(stub, monkeypatch, NEMOTRON_MODEL) as http:
        live = Live(http, stub)
        assert http.post("/api/demo/reset", json={}).status_code in (200, 201, 303)
        relay = live.report_id(COMMUNITY_RELAY.source, COMMUNITY_RELAY.text)

        replayed = live.investigate(relay, passphrase=None)
        assert (replayed["status"], replayed["mode"]) == ("NEEDS_REVIEW", "REPLAYED")
        page = http.get(f"/reports/{relay}")
        assert "REPLAYED" in page.text and PASSPHRASE not in page.text
        assert stub.count == 8 and live.counted() == 8

    # the CLI shows the ledger and a saved result without a call
    shown = CliRunner().invoke(trace_cli, ["ledger"])
    assert shown.exit_code == 0 and json.loads(shown.output)["requests"] == 8
    shown = CliRunner().invoke(trace_cli, ["investigate", relay, "--json", "--no-prompt"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["mode"] == "REPLAYED"
    assert stub.count == 8


def test_another_model_gets_no_reasoning_field_and_its_own_output_mode(
    stub: StubChatServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACE_MODEL_STRUCTURED_OUTPUT", "json_object_schema")
    with live_app(stub, monkeypatch, "qwen2.5-1.5b-instruct") as http:
        live = Live(http, stub)
        stub.add(answer({"attribution": "UNCLEAR", "referenced_source": "NONE"}))
        result = live.investigate(live.report_id(POLICE, POLICE_REPORT.text))
        assert (result["status"], result["model"], stub.count) == (
            "NEEDS_REVIEW",
            "qwen2.5-1.5b-instruct",
            1,
        )
        body = check_body(stub.requests[0], "qwen2.5-1.5b-instruct", reasoning_off=False)
        assert body["response_format"]["type"] == "json_object"
        assert "Authorization" not in stub.requests[0].headers


def test_cli_investigate_runs_live_with_the_passphrase_from_the_environment(
    stub: StubChatServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with live_app(stub, monkeypatch, NEMOTRON_MODEL) as http:
        police = Live(http, stub).report_id(POLICE, POLICE_REPORT.text)
    stub.add(answer({"attribution": "DIRECT", "referenced_source": "NONE"}))
    shown = CliRunner().invoke(trace_cli, ["investigate", police])
    assert shown.exit_code == 0, shown.output
    assert "NEEDS_REVIEW" in shown.output and "LIVE" in shown.output
    assert "cue [vague or unconfirmed sourcing]: They say" in shown.output
    assert PASSPHRASE not in shown.output
    assert stub.count == 1
    missing = CliRunner().invoke(trace_cli, ["investigate", "rep_nope", "--no-prompt"])
    assert missing.exit_code == 1 and stub.count == 1
    # the live check is audited as the operator's, with its outcome and no passphrase
    trail = CliRunner().invoke(trace_cli, ["audit", "--json", "--action", "investigation.check"])
    rows = [json.loads(line) for line in trail.output.splitlines() if line.startswith("{")]
    assert [(r["object"], r["after"]["status"]) for r in rows] == [
        (f"report:{police}", "NEEDS_REVIEW")
    ]
    assert rows[0]["actor"].startswith("operator (command line")
    assert PASSPHRASE not in trail.output


@pytest.mark.parametrize("status", [200, 500])
def test_litellm_provider_sends_exactly_one_request_per_call(
    stub: StubChatServer, home: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    pytest.importorskip("litellm")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("TRACE_MODEL_PROVIDER", "litellm")
    model = LITELLM_PREFIX + NEMOTRON_MODEL
    with live_app(stub, monkeypatch, model) as http:
        live = Live(http, stub)
        if status == 200:
            stub.add(
                answer(
                    {"attribution": "DIRECT", "referenced_source": "NONE"},
                    prompt_tokens=200,
                    completion_tokens=12,
                )
            )
        else:
            stub.add(StubResponse(status=500, body={"error": "boom"}))
        result = live.investigate(live.report_id(POLICE, POLICE_REPORT.text))
        assert stub.count == 1 and live.counted() == 1
        body = stub.requests[0].json()
        assert body["temperature"] == 0 and body["max_tokens"] == 96
        assert body["chat_template_kwargs"] == REASONING_OFF
        if status == 200:
            assert result["status"] == "NEEDS_REVIEW"  # "They say": lowered by the evidence
            assert result["usage"]["source"] == "provider"
            assert result["usage"]["prompt_tokens"] == 200
        else:
            assert result["status"] == "FAILED"


def test_cli_eval_reads_crisislex_csv_and_prints_the_rule_off_comparison(
    stub: StubChatServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``trace eval --crisislex`` over a CSV in CrisisLexT26's layout (rows written for
    this test), against a real HTTP server that calls every tweet first-hand."""
    csv_file = tmp_path / "2099_Test_flood-tweets_labeled.csv"
    csv_file.write_text(
        "Tweet ID, Tweet Text, Information Source, Information Type, Informativeness\n"
        '"1","We are at the school roof with two kids, water still rising",Eyewitness,'
        "Affected individuals,Related and informative\n"
        '"2","Flood leaves 3 missing in the valley http://t.co/x",Media,'
        "Affected individuals,Related and informative\n"
        '"3","RT @someone: family trapped on Hill Road",Outsiders,'
        "Affected individuals,Related and informative\n"
        '"4","Mayor asks people to stay home",Government,'
        "Affected individuals,Related and informative\n"
        '"5","thinking of everyone there",Outsiders,'
        "Affected individuals,Related - but not informative\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("TRACE_MODEL_BASE_URL", stub.base_url)
    monkeypatch.setenv("TRACE_MODEL", NEMOTRON_MODEL)
    for _ in range(3):
        stub.add(answer({"attribution": "DIRECT", "referenced_source": "NONE"}))

    refused = CliRunner().invoke(trace_cli, ["eval", str(csv_file)])
    assert refused.exit_code == 2 and "--crisislex" in refused.output and stub.count == 0

    out = tmp_path / "eval.json"
    shown = CliRunner().invoke(
        trace_cli, ["eval", "--crisislex", str(csv_file), "--rule-off", "--out", str(out)]
    )
    assert shown.exit_code == 0, shown.output
    assert stub.count == 3
    summary = json.loads(out.read_text(encoding="utf-8"))["summary"]
    assert summary["skipped"] == {"not related and informative": 1, "source Government": 1}
    assert summary["misleading_completed"] == 0
    assert summary["first_hand_recall"] == 1.0
    assert summary["lowered_by_evidence"] == {
        "total": 2,
        "by_kind": {"no_first_hand": 1, "relay": 1},
    }
    assert summary["rule_off"]["misleading_completed"] == 2
    assert "without the evidence rule" in shown.output
    assert "2099_Test_flood:2" in shown.output  # a misleading id, in the rule-off figures
