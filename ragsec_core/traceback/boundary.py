"""Where the poison ends: the attribution boundary of Pass-1, as a pure function of the logged evidence.

Pass-1's replays decide *which* chunks the event needs (and the minimal causal span in each); this module
decides *how much* of each implicated chunk is reported. It reads only the trace and the finished
Pass-1 result (the round's event anchor, the causal spans, earlier rounds' masks), never the model, so
a benchmark that stored its traces and artifacts re-scores a new rule offline (`bench traceback
--rescore DIR`) and the live run and the re-score agree by construction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragsec_core.data.spans import Span, attribution_span, overlaps
from ragsec_core.data.trace import Trace, contains_norm
from ragsec_core.traceback.result import Round, SpanRecord, TracebackResult
from ragsec_core.traceback.splice import query_targeted, region

WHOLE_CHUNK_PATHS = ("fallback_chunk",)  # Pass-1 found no span inside the chunk: the chunk is reported whole


def span_record(trace: Trace, hit: int, local: Span) -> SpanRecord:
    """A chunk-local span with its prompt offsets (the trace's used-hit block of that chunk)."""
    h = trace.hits[hit]
    block = next(s for s in trace.spans if s.hit == hit)
    return SpanRecord(hit, h.chunk_id, h.rank, list(local), [block.start + local[0], block.start + local[1]],
                      h.text[local[0] : local[1]])


def local_masks(trace: Trace, hit: int, masks: Sequence[Span]) -> list[Span]:
    """Prompt-global masks clipped to one used chunk, in chunk-local coordinates."""
    blk = next(s for s in trace.spans if s.hit == hit)
    return [(max(s, blk.start) - blk.start, min(e, blk.end) - blk.start)
            for s, e in masks if overlaps((s, e), (blk.start, blk.end))]


def seed_span(text: str, anchor: str, masked: Sequence[Span], causal: Span | None) -> Span | None:
    """Where the claim sits in one chunk: the answer-anchored span (unless an earlier round masked it),
    else the replay's causal span in that chunk."""
    span = attribution_span(text, anchor)
    if span is not None and not any(overlaps(span, m) for m in masked):
        return span
    return causal


def attribute_hit(trace: Trace, hit: int, anchor: str, masks: Sequence[Span], causal: Span | None) -> SpanRecord:
    """The reported span in one implicated chunk: the planted region around the claim (`splice.region`),
    or the causal span alone when nothing anchors it."""
    text = trace.hits[hit].text
    masked = local_masks(trace, hit, masks)
    seed = seed_span(text, anchor, masked, causal)
    if seed is None:
        return span_record(trace, hit, causal or (0, len(text)))
    return span_record(trace, hit, region(text, seed, anchor, trace.query))


def verdict(rnd: Round) -> list[int]:
    """The hits the round's replays implicated (older artifacts: the hits of its attribution)."""
    return list(rnd.implicated) or [r.hit for r in rnd.attribution]


def implicated(trace: Trace, rnd: Round, reported: set[int]) -> list[int]:
    """The chunks a round reports. The replays' verdicts come first: the chunks whose masks the event
    needed and those that restored it alone. A holder of the answer that the joint mask merely covered
    stays only if it reads as a poison (`splice.query_targeted`), and so does any other used chunk that
    states the event string that way: a further planted copy, which a fragile model may not need."""
    needed = {r.hit for r in rnd.causal}
    hits = [h for h in verdict(rnd) if h not in reported]
    query_shaped = {i: query_targeted(trace.hits[i].text, rnd.anchor, trace.query) for i in trace.used
                    if contains_norm(trace.hits[i].text, rnd.anchor)}
    if rnd.path == "fast_path_multi":
        hits = [h for h in hits if h in needed or query_shaped.get(h, False)]
    copies = [i for i, shaped in query_shaped.items() if shaped and i not in hits and i not in reported]
    return hits + copies


def attribute_rounds(trace: Trace, result: TracebackResult) -> list[list[SpanRecord]]:
    """Each round's reported spans, drawn with this module's rule from the logged evidence: the chunks the
    replays implicated (and textual copies, `implicated`) that no earlier round reported, each one's span
    drawn around its claim. Pass-1 stores these as the rounds' attribution; `--rescore` redraws them."""
    out: list[list[SpanRecord]] = []
    masks: list[Span] = []
    reported: set[int] = set()
    for rnd in result.rounds:
        causal = {r.hit: (r.local[0], r.local[1]) for r in rnd.causal}
        if rnd.path in WHOLE_CHUNK_PATHS:
            spans = [span_record(trace, h, (0, len(trace.hits[h].text))) for h in verdict(rnd) if h not in reported]
        else:
            spans = [attribute_hit(trace, h, rnd.anchor, masks, causal.get(h)) for h in implicated(trace, rnd, reported)]
        reported |= {r.hit for r in spans}
        out.append(spans)
        masks += [r.prompt_span for r in rnd.causal]
    return out


def reattribute(trace: Trace, result: TracebackResult) -> list[SpanRecord]:
    """A finished result's reported attribution (every round's, `attribute_rounds`), in round order."""
    return [r for spans in attribute_rounds(trace, result) for r in spans]
