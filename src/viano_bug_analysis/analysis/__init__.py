"""Case Interpretation v1 (see docs/case-interpretation.md).

from viano_bug_analysis.analysis import CaseInterpreter
result = await CaseInterpreter(store, gateway).interpret(case_id, package_id)
"""

from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.analysis.interpreter import (
    DEFAULT_ATTEMPT_ID,
    CaseInterpreter,
    InterpretationResult,
)
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.analysis.prompt_builder import PreparedContext, PromptBuilder
from viano_bug_analysis.llm.gateway import OutcomeStatus

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
