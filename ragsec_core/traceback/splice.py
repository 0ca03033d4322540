"""The planted region around a claim: textual evidence of where inserted text starts and stops.

Planted text is contiguous and targets the query; the host it sits in was written for its own sake.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragsec_core.data.spans import Span, is_query_bait, query_share, sentence_spans
from ragsec_core.data.trace import contains_norm


def region(text: str, seed: Span, anchor: str, query: str, others: Sequence[str], masked: Sequence[Span]) -> Span:
    """The claim sentence is the sentence of this chunk that states the event string and shares most
    words with the query (a benign host may name the answer too); the block is the unbroken run of
    sentences around it that state the event string, extended back to the nearest sentence that mostly
    repeats the query and forward by one such sentence."""
    sents = sentence_spans(text)
    texts = [text[a:b] for a, b in sents]
    claims = [k for k, t in enumerate(texts) if contains_norm(t, anchor)]
    own = [k for k, (a, b) in enumerate(sents) if a <= seed[0] < b]
    if not claims and not own:
        return seed
    start = max(claims, key=lambda k: (query_share(texts[k], query), -k)) if claims else own[0]
    lo = hi = start
    while lo - 1 in claims:
        lo -= 1
    while hi + 1 in claims:
        hi += 1
    bait = next((k for k in range(lo - 1, -1, -1) if is_query_bait(texts[k], query)), None)
    lo = lo if bait is None else bait
    if hi + 1 < len(sents) and is_query_bait(texts[hi + 1], query):
        hi += 1
    return (sents[lo][0], sents[hi][1])
