"""The common interface of every traceback method: a Pass-0 trace in, suspected chunks and spans out.

All methods see the same triggered trace and the same per-event context, so the benchmark can compare
them on identical events. Spans are chunk-local `(hit, (l, r))`; the benchmark moves them to prompt
coordinates with the trace's offsets. Chunk-level methods report whole chunks as their spans, which is
how the paper scores passage-level baselines at character level.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragsec_core.data.spans import DEFAULT_MASK_MODE, Span
from ragsec_core.data.trace import DEFAULT_TRIGGER, Trace, event_anchor, overlaps
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE
from ragsec_core.traceback.ragcharacter import run_pass1
from ragsec_core.traceback.snapshot import Snapshot

if TYPE_CHECKING:
    from ragsec_core.models.endpoint import EndpointLLM
    from ragsec_core.models.llm import LLM
    from ragsec_core.retrieval.hybrid import HybridRetriever
    from ragsec_core.traceback.result import TracebackResult


@dataclass
class MethodResult:
    method: str
    chunks: list[int]  # suspected used-hit indices, most suspicious first
    spans: list[tuple[int, Span]]  # (used hit, chunk-local span)
    outside: list[str] = field(default_factory=list)  # suspected chunk ids that never reached the prompt
    calls: int = 0  # model invocations (forwards, generations, replays), victim and judge together
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0  # tokens pushed through a model (prompt and generated), victim and judge together
    fpe: float | None = None  # forward-pass equivalents when the method measures them itself (Pass-1's engine)

    def forward_pass_equivalents(self, prompt_tokens: int) -> float:
        """The issue's cost unit: one forward over the event's full prompt counts 1, so a method's tokens
        are divided by the prompt's length (a generation counts every token it pushes through)."""
        return self.fpe if self.fpe is not None else self.tokens / max(1, prompt_tokens)


@dataclass(frozen=True)
class Spent:
    """Model cost outside a method's own `Timer` (a shared value computed earlier for another method)."""

    calls: int = 0
    seconds: float = 0.0
    tokens: int = 0


@dataclass
class MethodContext:
    """What a method may use besides the trace. `judge` is also RAGOrigin's proxy LM; with an endpoint
    victim it is the local surrogate."""

    llm: LLM | EndpointLLM
    judge: LLM
    retriever: HybridRetriever | None = None  # the event's corpus index, for re-retrieval
    ppl_threshold: float | None = None  # calibrated once per benchmark on benign corpus chunks
    seed: int = 0
    mask_mode: str = DEFAULT_MASK_MODE  # Pass-1's masking and objective (`bench traceback --mask-mode/--objective`)
    objective: str = DEFAULT_OBJECTIVE
    trigger: str = DEFAULT_TRIGGER  # which Pass-0 outcome is an event (`bench traceback --trigger`)
    snapshot: Snapshot | None = None  # Pass-1's trusted corpus (`bench traceback --snapshot`: the clean one)
    calls: int = 0  # incremented by every model call the helpers make
    tokens: int = 0  # tokens those calls pushed through a model (the forward-pass-equivalent count)
    _memo: dict[str, tuple[Any, Spent]] = field(default_factory=dict)

    def for_event(self, retriever: HybridRetriever | None) -> MethodContext:
        """A fresh per-event context (shared results must not leak across events)."""
        return MethodContext(self.llm, self.judge, retriever, self.ppl_threshold, self.seed, self.mask_mode,
                             self.objective, self.trigger, self.snapshot)

    def shared(self, key: str, compute: Callable[[], Any]) -> tuple[Any, Spent]:
        """A per-event value computed once and reused by several methods (RAGOrigin's ranking by
        RAGOrigin-Char, Pass-1 by the -Char fallbacks). Returns (value, cost) where the cost is what the
        caller's own `Timer` did not see: nothing when computed now, the full cost when cached, so every
        method that relies on it is charged for it once."""
        if key in self._memo:
            return self._memo[key]
        t0, c0, k0 = time.perf_counter(), self.calls, self.tokens
        value = compute()
        self._memo[key] = (value, Spent(self.calls - c0, time.perf_counter() - t0, self.tokens - k0))
        return value, Spent()

    def pass1(self, trace: Trace) -> tuple[TracebackResult, Spent]:
        """RAGCharacter Pass-1 on this event, run once per event (see `shared`)."""
        def compute() -> TracebackResult:
            res = run_pass1(self.llm, trace, self.trigger, self.objective, self.mask_mode,
                            reader=self.judge, snapshot=self.snapshot)  # the judge is local: it reads for the boundary
            self.calls += res.model_calls
            self.tokens += round(res.forward_pass_equivalents * int(trace.timing.get("prompt_tokens") or 0))
            return res

        return self.shared("pass1", compute)


class Method(Protocol):
    name: str

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult: ...


def carries_event(answer: str, trace: Trace) -> bool:
    """Keyword match of a (re)generated answer against the observed event."""
    return overlaps(answer, event_anchor(trace.answer, trace.labels.target)) or overlaps(answer, trace.answer)


def whole(trace: Trace, hits: list[int]) -> list[tuple[int, Span]]:
    return [(i, (0, len(trace.hits[i].text))) for i in hits]


def split_used(trace: Trace, chunk_ids: list[str]) -> tuple[list[int], list[str]]:
    """Suspected chunk ids -> (used hit indices in the given order, ids outside the prompt)."""
    by_id = {trace.hits[i].chunk_id: i for i in trace.used}
    return [by_id[c] for c in chunk_ids if c in by_id], [c for c in chunk_ids if c not in by_id]


class Timer:
    """Seconds and model calls spent between construction and `result`."""

    def __init__(self, ctx: MethodContext) -> None:
        self.ctx, self.t0, self.calls0, self.tokens0 = ctx, time.perf_counter(), ctx.calls, ctx.tokens

    def result(self, method: str, chunks: list[int], spans: list[tuple[int, Span]], **kw: Any) -> MethodResult:
        extra: Spent = kw.pop("extra", Spent())
        return MethodResult(
            method, chunks, spans, calls=self.ctx.calls - self.calls0 + extra.calls,
            seconds=time.perf_counter() - self.t0 + extra.seconds, tokens=self.ctx.tokens - self.tokens0 + extra.tokens,
            **kw,
        )

