"""Importing modelgate never imports litellm (nor a database driver)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys, time
start = time.perf_counter()
import modelgate, modelgate.gateway, modelgate.providers, modelgate.ledger, modelgate.answers
import modelgate.recording, modelgate.fingerprint, modelgate.prompts
from modelgate.providers import ProviderConfig, build_provider
provider = build_provider(ProviderConfig(name="p", base_url="http://127.0.0.1:9/v1", model="m"))
elapsed = time.perf_counter() - start
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai", "sqlalchemy"))
print(json.dumps({"heavy": heavy, "elapsed": elapsed}))
"""


def test_import_modelgate_does_not_import_litellm() -> None:
    pytest.importorskip("litellm")  # the check matters when litellm is installed
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["heavy"] == []


def test_litellm_is_imported_when_its_provider_is_built() -> None:
    pytest.importorskip("litellm")
    probe = (
        "import sys\n"
        "from modelgate.providers import ProviderConfig, build_provider\n"
        "build_provider(ProviderConfig(name='p', adapter='litellm',"
        " base_url='http://127.0.0.1:9/v1', model='openai/m'))\n"
        "import os\n"
        "print('litellm' in sys.modules, os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
    )
    assert out.stdout.strip().splitlines()[-1] == "True True"
