"""Case Interpretation v1 (see docs/case-interpretation.md).

    from viano_bug_analysis.analysis import CaseInterpreter
    result = await CaseInterpreter(store, gateway).interpret(case_id, package_id)

Names are resolved lazily, so importing a light submodule (``errors``, ``validation``)
never imports the interpreter and its dependencies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from viano_bug_analysis.analysis.errors import InterpretationError
    from viano_bug_analysis.analysis.interpreter import (
        DEFAULT_ATTEMPT_ID,
        CaseInterpreter,
        InterpretationResult,
    )
    from viano_bug_analysis.analysis.limits import InterpretationLimits
    from viano_bug_analysis.analysis.prompt_builder import PreparedContext, PromptBuilder
    from viano_bug_analysis.llm.gateway import OutcomeStatus

_EXPORTS = {
    "DEFAULT_ATTEMPT_ID": "viano_bug_analysis.analysis.interpreter",
    "CaseInterpreter": "viano_bug_analysis.analysis.interpreter",
    "InterpretationResult": "viano_bug_analysis.analysis.interpreter",
    "InterpretationError": "viano_bug_analysis.analysis.errors",
    "InterpretationLimits": "viano_bug_analysis.analysis.limits",
    "PreparedContext": "viano_bug_analysis.analysis.prompt_builder",
    "PromptBuilder": "viano_bug_analysis.analysis.prompt_builder",
    "OutcomeStatus": "viano_bug_analysis.llm.gateway",
}

__all__ = [
    "DEFAULT_ATTEMPT_ID",
    "CaseInterpreter",
    "InterpretationError",
    "InterpretationLimits",
    "InterpretationResult",
    "OutcomeStatus",
    "PreparedContext",
    "PromptBuilder",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
