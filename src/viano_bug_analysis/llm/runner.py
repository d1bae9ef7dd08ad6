"""CaseLLMRunner: one gateway round per call, persisted before anything else.

For an attempt (see ``rounds.py``) the runner looks at the rounds already in the
package and decides, without sending anything, whether the attempt is finished or
waiting:

- a COMPLETED, ERROR or BLOCKED round is final for the attempt: it is returned as is
  (a confirmed result is never paid for twice, whatever the configuration is now);
- a RETRY_PENDING round whose due time has not come is returned as is;
- otherwise the next attempt is dispatched. Its outcome (except DEFERRED, where nothing
  was sent) is written as an immutable round record in a new package generation *at
  once*, before the caller validates or publishes anything. Only a call whose answer
  was lost before that generation was published is unconfirmed and may be repeated.

Retries share the attempt_id, the request fingerprint and the configuration
fingerprint; a RETRY_PENDING attempt asked to continue with other fingerprints is
refused (``interpretation.attempt_mismatch``): use a new attempt_id.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from modelgate.types import ModelRequest
from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.llm.gateway import Clock, LLMGateway, OutcomeStatus
from viano_bug_analysis.llm.rounds import (
    ROUND_FORMAT,
    AttemptKey,
    InterpretationLayout,
    load_json,
    rounds_of,
)
from viano_bug_analysis.packages import (
    PackageGeneration,
    PackageOperation,
    PackageReader,
    PackageWriter,
)
from viano_bug_analysis.packages.threads import storage_pool

FINAL = frozenset({OutcomeStatus.COMPLETED, OutcomeStatus.ERROR, OutcomeStatus.BLOCKED})


@dataclass(frozen=True, slots=True)
class RoundResult:
    """The state of an attempt after ``CaseLLMRunner.run``.

    ``record`` is the round record (``None`` for DEFERRED), ``ref`` its member name,
    ``generation`` the generation published by this call (``None`` when nothing was
    published), ``reused`` whether no request was sent by this call, ``reader`` the
    reader that validated ``generation``, still open (the caller takes it over and
    closes it).
    """

    status: OutcomeStatus
    record: dict[str, Any] | None
    ref: str | None
    generation: PackageGeneration | None
    reused: bool
    deferred_error: dict[str, Any] | None = None
    reader: PackageReader | None = None

    @property
    def outcome(self) -> dict[str, Any]:
        return self.record["outcome"] if self.record else {}


def read_rounds(
    reader: PackageReader, layout: InterpretationLayout, attempt_hash: str
) -> list[tuple[str, dict[str, Any]]]:
    """The round records of one attempt, in order."""
    names = rounds_of(reader.names(), layout).get(attempt_hash, [])
    out: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        try:
            record = load_json(reader.read(name))
        except ValueError as exc:
            raise InterpretationError(
                f"round record {name} is unreadable: {exc}", code="interpretation.storage"
            ) from None
        out.append((name, record))
    return out


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


T = TypeVar("T")


async def run_blocking(fn: Callable[..., T], *args: Any) -> T:
    """Run the blocking package step ``fn(*args)`` in a storage thread.

    A cancellation waits for the step to end before it propagates, so that the operation
    lock is never released while a generation is half published or a reader is in use;
    a result it then drops is closed when it has a ``close`` method."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(loop.run_in_executor(storage_pool(), fn, *args))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            dropped = await task
            close = getattr(dropped, "close", None)
            if callable(close):
                close()
        raise


async def publish_in_thread(op: PackageOperation, writer: PackageWriter) -> PackageGeneration:
    """Publish off the event loop (see :func:`run_blocking`)."""
    return await run_blocking(op.publish, writer)


@dataclass(frozen=True, slots=True)
class _Published:
    """A published generation and the open reader that validated it; ``close`` lets
    ``run_blocking`` close it when a cancellation drops it."""

    generation: PackageGeneration
    reader: PackageReader

    def close(self) -> None:
        self.reader.close()


def _publish_round(
    op: PackageOperation, reader: PackageReader, ref: str, record: dict[str, Any]
) -> _Published:
    writer = PackageWriter(reader)
    writer.add_json(ref, record)
    return _Published(*op.publish_open(writer))


class CaseLLMRunner:
    """Runs and records gateway rounds of case interpretation."""

    def __init__(
        self, gateway: LLMGateway, output_type: type[BaseModel], *, clock: Clock | None = None
    ) -> None:
        self.gateway = gateway
        self.output_type = output_type
        self._clock = clock or gateway.clock

    async def run(
        self,
        op: PackageOperation,
        reader: PackageReader,
        layout: InterpretationLayout,
        attempt: AttemptKey,
        request: ModelRequest,
        binding: dict[str, Any],
    ) -> RoundResult:
        """Advance the attempt by at most one upstream attempt (see the module doc).

        ``binding`` (identities, revision, index, hashes) is copied into the record.
        """
        rounds = read_rounds(reader, layout, attempt.attempt_hash)
        attempt_number = 1
        if rounds:
            ref, last = rounds[-1]
            status = OutcomeStatus(last["outcome"]["status"])
            if status in FINAL:
                return RoundResult(status, last, ref, None, reused=True)
            if (last["request_fingerprint"], last["configuration_fingerprint"]) != (
                attempt.request_fingerprint,
                attempt.configuration_fingerprint,
            ):
                raise InterpretationError(
                    f"attempt {attempt.attempt_id!r} was started with another request or "
                    "configuration; continue it unchanged or use a new attempt_id",
                    code="interpretation.attempt_mismatch",
                    attempt_id=attempt.attempt_id,
                )
            due = last["outcome"].get("due_at")
            if due and self._clock() < _parse_time(due):
                return RoundResult(status, last, ref, None, reused=True)
            attempt_number = int(last["outcome"]["attempt_number"]) + 1
        outcome = await self.gateway.dispatch(
            request, self.output_type, attempt_number=attempt_number
        )
        if outcome.status is OutcomeStatus.DEFERRED:
            return RoundResult(
                OutcomeStatus.DEFERRED, None, None, None, reused=False, deferred_error=outcome.error
            )
        record = {
            "format": ROUND_FORMAT,
            **binding,
            "attempt_id": attempt.attempt_id,
            "attempt_hash": attempt.attempt_hash,
            "round": len(rounds) + 1,
            "request_fingerprint": attempt.request_fingerprint,
            "configuration_fingerprint": attempt.configuration_fingerprint,
            "prompt_version": request.prompt_version,
            "outcome": outcome.to_json(),
        }
        ref = layout.round(attempt.attempt_hash, len(rounds) + 1)
        published = await run_blocking(_publish_round, op, reader, ref, record)
        return RoundResult(
            outcome.status,
            record,
            ref,
            published.generation,
            reused=False,
            reader=published.reader,
        )
