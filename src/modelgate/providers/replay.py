"""Answers from recorded exchanges by request fingerprint; never a live call."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from modelgate.errors import ReplayMiss
from modelgate.fingerprint import request_fingerprint
from modelgate.providers.base import Provider
from modelgate.recording import Exchange
from modelgate.types import ModelRequest, ProviderResponse, Usage


class ReplayProvider(Provider):
    """Replays answered (``outcome == "ok"``) exchanges recorded by ``Recorder``.

    The fingerprint is computed with ``model`` (by default the one model all the
    exchanges share), so a replay answers only the exact request that was recorded.
    Anything else raises ``ReplayMiss`` (a ``NotSent``): replay never falls through to a
    live provider and is never charged to the ledger (``sends_upstream = False``).
    """

    sends_upstream: ClassVar[bool] = False

    def __init__(
        self,
        exchanges: Iterable[Exchange],
        *,
        model: str | None = None,
        name: str = "replay",
        timeout_s: float = 45.0,
    ) -> None:
        answered = [e for e in exchanges if e.ok and e.response_text is not None]
        models = {e.model for e in answered}
        if model is None:
            if len(models) > 1:
                raise ValueError(f"exchanges use several models {sorted(models)}: name one")
            model = next(iter(models), "replay")
        self.name = name
        self.model = model
        self.timeout_s = timeout_s
        self._by_fingerprint: dict[str, Exchange] = {
            e.request_fingerprint: e for e in answered if e.model == model
        }
        self.requests: list[ModelRequest] = []
        self._played: set[str] = set()

    def __len__(self) -> int:
        return len(self._by_fingerprint)

    @property
    def unplayed(self) -> list[str]:
        """Fingerprints of recorded exchanges no request asked for (sorted): a test can
        fail when its recording holds requests the code no longer makes."""
        return sorted(set(self._by_fingerprint) - self._played)

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        self.requests.append(request)
        fp = request_fingerprint(request, self.model)
        exchange = self._by_fingerprint.get(fp)
        if exchange is None or exchange.response_text is None:
            raise ReplayMiss(f"no recorded exchange for {fp}", fingerprint=fp)
        self._played.add(fp)
        usage = None
        if exchange.usage and exchange.usage.get("source") == "provider":
            usage = Usage(
                prompt_tokens=int(exchange.usage["prompt_tokens"]),
                completion_tokens=int(exchange.usage["completion_tokens"]),
                source="provider",
            )
        return ProviderResponse(
            text=exchange.response_text,
            model=exchange.model,
            usage=usage,
            request_body=exchange.request,
            raw=exchange.response or {},
        )
