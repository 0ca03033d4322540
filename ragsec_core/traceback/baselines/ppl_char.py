"""PPL-Char: event-local perplexity ranking, a sliding-window perplexity scan for suspicious sub-spans,
then occlusion on the victim model (prefix-cached replay, masking as Pass-1 does: `--mask-mode`) down to a
minimal span that suppresses y.

No corpus calibration: chunks are ranked against each other within the event. When no window's
occlusion suppresses the event, the most surprising window is reported as it is.
"""

from __future__ import annotations

import math
from functools import partial

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.spans import Span, apply_masks, bisect_minimal, trim
from ragsec_core.data.trace import Trace
from ragsec_core.models.llm import LLM, GenerationSettings
from ragsec_core.models.replay import ReplayEngine
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer, carries_event
from ragsec_core.traceback.baselines.lm import token_nll

TOP_CHUNKS = 2
WINDOW_TOKENS = 24
STRIDE_TOKENS = 12
WINDOWS_PER_CHUNK = 3
MAX_BISECT_STEPS = 6
MIN_SPAN_CHARS = 4


def windows(text: str, nll: list[float], offsets: list[tuple[int, int]]) -> list[tuple[float, Span]]:
    """Token windows as (mean NLL, trimmed char span), most surprising first."""
    out: list[tuple[float, Span]] = []
    n = len(nll)
    starts = range(0, max(1, n - WINDOW_TOKENS + 1), STRIDE_TOKENS) if n > WINDOW_TOKENS else [0]
    for s in starts:
        e = min(n, s + WINDOW_TOKENS)
        span = trim(text, (offsets[s][0], offsets[e - 1][1]))
        if span[1] - span[0] >= MIN_SPAN_CHARS:
            out.append((sum(nll[s:e]) / (e - s), span))
    return sorted(out, key=lambda w: (-w[0], w[1]))


class PPLChar:
    name = "ppl-char"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        scans = {i: token_nll(ctx, ctx.judge, trace.hits[i].text) for i in trace.used}
        ppl = {i: math.exp(sum(n) / len(n)) if n else 1.0 for i, (n, _) in scans.items()}
        ranked = sorted(trace.used, key=lambda i: (-ppl[i], trace.hits[i].rank))[:TOP_CHUNKS]
        cands = sorted(
            ((score, i, span) for i in ranked for score, span in windows(trace.hits[i].text, *scans[i])[:WINDOWS_PER_CHUNK]),
            key=lambda c: -c[0],
        )
        blocks = {s.hit: s for s in trace.spans}
        if not isinstance(ctx.llm, LLM):  # ACCESS: local-only (check_access refuses it before a run)
            raise RagsecError("ppl-char replays the victim locally; it cannot run on an endpoint")
        engine = ReplayEngine(ctx.llm, trace.prompt, GenerationSettings(**trace.model["settings"]))
        ctx.calls += 1  # the engine's base-prompt forward

        def suppressed(i: int, span: Span) -> bool:
            a = blocks[i].start
            return not carries_event(engine.replay(apply_masks(trace.prompt, [(a + span[0], a + span[1])], ctx.mask_mode), trace.answer).answer, trace)

        found: tuple[int, Span] | None = None
        occluded = False
        calls0 = engine.calls
        for _, i, span in cands:
            if suppressed(i, span):
                text = trace.hits[i].text
                found = (i, bisect_minimal(text, span, partial(suppressed, i), MAX_BISECT_STEPS, MIN_SPAN_CHARS)[0])
                occluded = True
                break
        ctx.calls += engine.calls - calls0
        ctx.tokens += engine.forward_tokens
        if found is None and cands:
            found = (cands[0][1], cands[0][2])
        chunks = [found[0]] if found else ranked[:1]
        return timer.result(self.name, chunks, [found] if found else [],
                            details={"occluded": occluded,
                                     "ppl": {trace.hits[i].chunk_id: round(p, 2) for i, p in ppl.items()}})
