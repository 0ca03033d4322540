"""PPL filtering (passage level): flag used chunks whose perplexity exceeds a benign upper-tail cutoff.

The cutoff is calibrated once on a seeded random sample of clean corpus chunks, so a flag means "more
surprising than nearly all benign text of this corpus", independent of the event being examined.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from ragsec_core.data.trace import Trace
from ragsec_core.models.scoring import perplexity_of
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer, whole
from ragsec_core.traceback.baselines.lm import token_nll

QUANTILE = 0.95
SAMPLE = 100


def _perplexity(ctx: MethodContext, text: str) -> float:
    """The judge's perplexity of `text`: `models.scoring`'s, on the first MAX_TOKENS tokens (via the
    baselines' `token_nll`, so a forward pass is counted in `ctx.calls` exactly when one runs)."""
    nll, _ = token_nll(ctx, ctx.judge, text)
    return perplexity_of(nll)


def calibrate(ctx: MethodContext, benign: Sequence[str], quantile: float = QUANTILE, sample: int = SAMPLE) -> float:
    """The `quantile` of perplexities over a seeded sample of benign chunk texts."""
    texts = [t for t in benign if t.strip()]
    if not texts:
        raise ValueError("no benign texts to calibrate the perplexity threshold on")
    picked = random.Random(ctx.seed).sample(texts, min(sample, len(texts)))
    return float(np.quantile([_perplexity(ctx, t) for t in picked], quantile))


class PPL:
    name = "ppl"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        if ctx.ppl_threshold is None:
            raise ValueError("PPL needs ctx.ppl_threshold (calibrate it on benign chunks first)")
        timer = Timer(ctx)
        scores = {i: _perplexity(ctx, trace.hits[i].text) for i in trace.used}
        flagged = sorted((i for i, p in scores.items() if p > ctx.ppl_threshold), key=lambda i: -scores[i])
        return timer.result(self.name, flagged, whole(trace, flagged),
                            details={"ppl": {trace.hits[i].chunk_id: round(p, 2) for i, p in scores.items()},
                                     "threshold": round(ctx.ppl_threshold, 2)})
