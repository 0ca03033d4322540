"""RAGOrigin: narrow the attribution scope to the retrieval-ordered groups that still reproduce y, score
each text's responsibility from three z-scored signals, and split poisoned from benign with KMeans(2).

Signals (higher = more responsible): -loss(y | text + q) under the proxy LM (generation influence),
-loss(q | text) (semantic correlation) and the retrieval score. The proxy is the judge model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragsec_core.data.trace import Trace
from ragsec_core.rag import render_prompt
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer, carries_event, split_used, whole
from ragsec_core.traceback.baselines.lm import continuation_nll, generate
from ragsec_core.traceback.baselines.prompts import QUERY_GIVEN_TEXT

EXTRA_GROUPS = 2  # groups of K beyond the prompt's top-K that may join the scope
MAX_TEXT_CHARS = 1500


@dataclass(frozen=True)
class Scoped:
    chunk_id: str
    text: str
    retrieval: float


def scope(trace: Trace, ctx: MethodContext) -> list[Scoped]:
    """The used hits (they produced y in Pass-0), then each next group of K while it alone reproduces y."""
    k, alpha = int(trace.retrieval.get("k", len(trace.hits))), trace.search_alpha()
    used = [Scoped(trace.hits[i].chunk_id, trace.hits[i].text, trace.hits[i].hybrid) for i in trace.used]
    if ctx.retriever is None:
        return used
    seen = {s.chunk_id for s in used}
    ranked = [Scoped(h.chunk.chunk_id, h.chunk.text, h.hybrid)
              for h in ctx.retriever.search(trace.query, k=k * (1 + EXTRA_GROUPS), alpha=alpha)]
    score = {s.chunk_id: s.retrieval for s in ranked}
    out = [Scoped(s.chunk_id, s.text, score.get(s.chunk_id, s.retrieval)) for s in used]
    rest = [s for s in ranked if s.chunk_id not in seen]
    limit = int(trace.model.get("settings", {}).get("max_new_tokens", 32))
    for g in range(EXTRA_GROUPS):
        group = rest[g * k : (g + 1) * k]
        if not group:
            break
        answer = generate(ctx, ctx.llm, render_prompt(ctx.llm, trace.query, [s.text for s in group]).prompt, limit)
        if not carries_event(answer, trace):
            break
        out += group
    return out


def zscore(x: np.ndarray) -> np.ndarray:
    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def responsibility(trace: Trace, ctx: MethodContext, texts: list[Scoped]) -> np.ndarray:
    proxy = ctx.judge
    gen = [-continuation_nll(ctx, proxy, render_prompt(proxy, trace.query, [s.text[:MAX_TEXT_CHARS]]).prompt, " " + trace.answer)
           for s in texts]
    sem = [-continuation_nll(ctx, proxy, QUERY_GIVEN_TEXT.format(text=s.text[:MAX_TEXT_CHARS]), trace.query) for s in texts]
    ret = [s.retrieval for s in texts]
    return np.mean([zscore(np.asarray(v, dtype=float)) for v in (gen, sem, ret)], axis=0)


def split_poisoned(scores: np.ndarray, seed: int) -> list[int]:
    """Indices in the higher-centroid KMeans(2) cluster, most responsible first."""
    if len(scores) < 2 or float(scores.std()) == 0:
        return list(range(len(scores)))[:1]
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=2, n_init=10, random_state=seed).fit(scores.reshape(-1, 1))
    hot = int(np.argmax(km.cluster_centers_.ravel()))
    members = [j for j in range(len(scores)) if km.labels_[j] == hot]
    return sorted(members, key=lambda j: -scores[j])


def origin_ranking(trace: Trace, ctx: MethodContext) -> tuple[list[str], dict[str, float], int]:
    """(poisoned chunk ids, most responsible first; every scoped text's score; scope size)."""
    texts = scope(trace, ctx)
    scores = responsibility(trace, ctx, texts)
    flagged = [texts[j].chunk_id for j in split_poisoned(scores, ctx.seed)]
    return flagged, {s.chunk_id: round(float(v), 4) for s, v in zip(texts, scores)}, len(texts)


class RAGOrigin:
    name = "ragorigin"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        (flagged, scores, size), cost = ctx.shared("ragorigin", lambda: origin_ranking(trace, ctx))
        used, outside = split_used(trace, flagged)
        return timer.result(self.name, used, whole(trace, used), outside=outside, extra=cost,
                            details={"scope": size, "scores": scores})
