"""The typed answer of case interpretation, as modelgate sees it.

The JSON schema file ``analysis/schemas/case-interpretation-output-v1.schema.json`` is
the one rule. This pydantic model mirrors it for modelgate's typed path and reports
*that file* as its JSON schema, so the schema sent to the provider and the schema the
gateway validates an answer against are the file itself (modelgate inlines ``$defs``).
A test checks that the mirror accepts and refuses exactly what the file does.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from viano_bug_analysis.analysis.schema_file import output_schema

SourceId = Annotated[str, Field(pattern=r"^[OCTEFRBSNDQX][0-9]{4,8}$")]


class Statement(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    text: Annotated[str, Field(min_length=1, max_length=8000)]
    source_ids: Annotated[list[SourceId], Field(min_length=1, max_length=64)]


class EntityReference(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    entity_id: Annotated[str, Field(pattern=r"^N[0-9]{4,8}$")]
    role: Annotated[str, Field(min_length=1, max_length=2000)]


Statements = Annotated[list[Statement], Field(max_length=256)]


class InterpretationOutput(BaseModel):
    """The twelve sections; nothing else."""

    model_config = ConfigDict(extra="forbid", strict=True)

    observed_behavior: Statements
    expected_behavior: Statements
    tester_assumptions: Statements
    confirmed_technical_facts: Statements
    behavior_gap: Statement | None
    first_known_divergence: Statement | None
    failure_stage: Statement | None
    contradictions: Statements
    unknowns: Statements
    relevant_entities: Annotated[list[EntityReference], Field(max_length=256)]
    investigation_direction: Statements
    interpretation_summary: Statement

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = True,
        ref_template: str = "#/$defs/{model}",
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The shipped schema file (not pydantic's generated schema)."""
        return output_schema()
