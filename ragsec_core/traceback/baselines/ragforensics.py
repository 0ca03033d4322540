"""RAGForensics: an LLM judge labels retrieved candidates as poisoned given (q, y); the poisoned ones are
removed from the index view and retrieval runs again, until a whole top-K is judged benign. The union of
removed chunks is the traced set. Without an index (a lone trace) only the logged hits are judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragsec_core.data.trace import Trace
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer, split_used, whole
from ragsec_core.traceback.baselines.lm import judge_yes
from ragsec_core.traceback.baselines.prompts import POISON_JUDGE

MAX_ITERATIONS = 5
MAX_TEXT_CHARS = 1500


@dataclass(frozen=True)
class Candidate:
    chunk_id: str
    text: str


def candidates(trace: Trace, ctx: MethodContext, removed: set[str]) -> list[Candidate]:
    """The current top-K for q with the removed chunks taken out of the corpus."""
    k, alpha = int(trace.retrieval.get("k", len(trace.hits))), trace.search_alpha()
    if ctx.retriever is None:
        return [Candidate(h.chunk_id, h.text) for h in trace.hits if h.chunk_id not in removed][:k]
    hits = ctx.retriever.search(trace.query, k=k + len(removed), alpha=alpha)
    return [Candidate(h.chunk.chunk_id, h.chunk.text) for h in hits if h.chunk.chunk_id not in removed][:k]


def forensic_removed(trace: Trace, ctx: MethodContext) -> tuple[list[str], int]:
    """Chunk ids judged poisoned over all iterations (judgement order) and the iterations run."""
    removed: list[str] = []
    verdicts: dict[str, bool] = {}
    it = 0
    for it in range(1, MAX_ITERATIONS + 1):  # noqa: B007 (`it` is returned: the iterations run)
        found = []
        for c in candidates(trace, ctx, set(removed)):
            if c.chunk_id not in verdicts:
                prompt = POISON_JUDGE.format(question=trace.query, answer=trace.answer, text=c.text[:MAX_TEXT_CHARS])
                verdicts[c.chunk_id] = judge_yes(ctx, prompt)[0]
            if verdicts[c.chunk_id]:
                found.append(c.chunk_id)
        if not found or ctx.retriever is None:
            removed += found
            break
        removed += found
    return removed, it


class RAGForensics:
    name = "ragforensics"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        (removed, iterations), cost = ctx.shared("ragforensics", lambda: forensic_removed(trace, ctx))
        used, outside = split_used(trace, removed)
        used.sort(key=lambda i: trace.hits[i].rank)
        return timer.result(self.name, used, whole(trace, used), outside=outside, extra=cost,
                            details={"iterations": iterations})
