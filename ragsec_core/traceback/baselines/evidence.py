"""The character-level stage of RAGForensics-Char and RAGOrigin-Char: the judge quotes a short verbatim
snippet from the chosen chunk, which is matched back to character offsets; if it cannot be matched, the
Pass-1 proposal span in that chunk is used, else the whole chunk.

Chunk choice comes from the base method; when it suspects no prompt-used chunk, the Pass-1 proposal
chunk is taken instead (the paper's "pass1-guided proposal chunk").
"""

from __future__ import annotations

import difflib
import re

from ragsec_core.data.spans import Span, sentence_spans, trim
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Spent, Timer
from ragsec_core.traceback.baselines.lm import ask_judge
from ragsec_core.traceback.baselines.prompts import EVIDENCE
from ragsec_core.traceback.baselines.ragforensics import forensic_removed
from ragsec_core.traceback.baselines.ragorigin import origin_ranking

MIN_SNIPPET_CHARS = 8
MIN_MATCHED_SHARE = 0.6  # of the snippet's characters, for a fuzzy match
MAX_TEXT_CHARS = 1500


def match_snippet(text: str, snippet: str) -> Span | None:
    """Offsets of a quoted snippet in `text`: exact (case/whitespace-insensitive), else the region spanned
    by difflib's matching blocks when they cover most of the snippet."""
    snip = " ".join(snippet.strip().strip("\"'“”").split())
    if len(snip) < MIN_SNIPPET_CHARS:
        return None
    pattern = r"\s+".join(re.escape(w) for w in snip.split(" "))
    m = re.search(pattern, text, flags=re.IGNORECASE)
    if m:
        return trim(text, (m.start(), m.end()))
    sm = difflib.SequenceMatcher(None, text.lower(), snip.lower(), autojunk=False)
    blocks = [b for b in sm.get_matching_blocks() if b.size >= 3]
    if not blocks or sum(b.size for b in blocks) < MIN_MATCHED_SHARE * len(snip):
        return None
    span = trim(text, (blocks[0].a, blocks[-1].a + blocks[-1].size))
    return span if MIN_SNIPPET_CHARS <= span[1] - span[0] <= 2 * len(snip) else None


def locate(text: str, snippet: str) -> Span | None:
    """The whole snippet if it matches, else its first sentence that does (small judges ramble on)."""
    return match_snippet(text, snippet) or next(
        (m for a, b in sentence_spans(snippet) if (m := match_snippet(text, snippet[a:b]))), None
    )


def characterise(name: str, trace: Trace, ctx: MethodContext, timer: Timer, suspected: list[int],
                 cost: Spent, details: dict[str, object]) -> MethodResult:
    """Chunk choice, judge snippet, offsets; `cost` is the shared base ranking's uncounted cost."""
    consulted: list[tuple[int | None, Span | None]] = []

    def proposal() -> tuple[int | None, Span | None]:
        """Pass-1's attribution span, charged to this method once however often it is consulted."""
        nonlocal cost
        if not consulted:
            res, more = ctx.pass1(trace)
            cost = Spent(cost.calls + more.calls, cost.seconds + more.seconds, cost.tokens + more.tokens)
            rec = res.attribution[0] if res.attribution else None
            consulted.append((rec.hit, (rec.local[0], rec.local[1])) if rec else (None, None))
        return consulted[0]

    hit = suspected[0] if suspected else proposal()[0]
    if hit is None:
        hit = trace.used[0]
    text = trace.hits[hit].text
    snippet = ask_judge(ctx, EVIDENCE.format(question=trace.query, answer=trace.answer, text=text[:MAX_TEXT_CHARS]))
    span, source = locate(text, snippet), "snippet"
    if span is None:
        p_hit, p_span = proposal()
        span, source = (p_span, "pass1") if p_hit == hit and p_span else ((0, len(text)), "chunk")
    chunks = [hit] + [i for i in suspected if i != hit]
    return timer.result(name, chunks, [(hit, span)], extra=cost,
                        details=details | {"snippet": snippet, "span_source": source})


class RAGForensicsChar:
    name = "ragforensics-char"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        (removed, _), cost = ctx.shared("ragforensics", lambda: forensic_removed(trace, ctx))
        by_id = {trace.hits[i].chunk_id: i for i in trace.used}
        suspected = sorted((by_id[c] for c in removed if c in by_id), key=lambda i: trace.hits[i].rank)
        return characterise(self.name, trace, ctx, timer, suspected, cost, {"removed": len(removed)})


class RAGOriginChar:
    name = "ragorigin-char"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        (flagged, _, size), cost = ctx.shared("ragorigin", lambda: origin_ranking(trace, ctx))
        by_id = {trace.hits[i].chunk_id: i for i in trace.used}
        suspected = [by_id[c] for c in flagged if c in by_id]
        return characterise(self.name, trace, ctx, timer, suspected, cost, {"scope": size})
