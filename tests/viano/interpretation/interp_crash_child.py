"""Child process for the crash tests: interpret once, dying at one publication step.

Usage: python interp_crash_child.py STORE ANSWER.json PUBLICATION STEP [exit|sigkill]

Right after ``STEP`` of the ``PUBLICATION``-th generation it publishes (1: context,
2: round, 3: accepted) the process dies with no cleanup: ``exit`` (the default) leaves
with status 86 through ``os._exit``; ``sigkill`` sends itself SIGKILL.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from modelgate.providers import ScriptedProvider
from viano_bug_analysis.analysis import CaseInterpreter
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import PackageStore


def main() -> None:
    root, answer_file, publication, step = sys.argv[1:5]
    how = sys.argv[5] if len(sys.argv) > 5 else "exit"
    seen = {"publication": 0}

    def hook(name: str) -> None:
        if name == "temp_written":
            seen["publication"] += 1
        if seen["publication"] == int(publication) and name == step:
            if how == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(86)

    store = PackageStore.open(Path(root), crash_hook=hook)
    answer = Path(answer_file).read_text(encoding="utf-8")
    provider = ScriptedProvider([answer], name="scripted", model="scripted-model")
    config = GatewayConfig.from_mapping(
        {"providers": [{"name": "scripted", "model": "scripted-model", "timeout_s": 5}]}
    )
    gateway = LLMGateway(config, providers=[provider])
    result = asyncio.run(CaseInterpreter(store, gateway).interpret("case-1", "supplied"))
    print(json.dumps(result.to_json()))


if __name__ == "__main__":
    main()
