"""Copies of one claim: the planted copies that neither the text nor the replays single out, found by their
likeness to the copies that were.

An attacker who plants P copies for one question writes P texts from one premise (PoisonedRAG prompts its
generator P times with the question and the target answer), so every copy states the same claim in other
words. The replays find the copies the event needs, and the text marks the copies that carry bait; but a
model that reads five copies keeps the event when one of them is masked, and not every copy makes it give
the target on its own, so a copy without bait can be neither needed nor sufficient, and stays out of the
report. What still sets such a copy apart from a benign passage that happens to state the answer string
is what it says: its claim sentence says what the reported copies' claim sentences say.

So a holder of the event string that a round did not report joins it when its claim sentence (the first
sentence that states the event string) is at least as close to a reported holder's claim sentence as the
two least alike reported holders' claim sentences are to each other (cosine of MiniLM embeddings, the
retriever's own encoder). The bar is drawn from the copies in hand, not set: it needs two reported holders,
so a round that reports one chunk (each event of a single planted text) adds none, and the more alike the
copies are, the higher it sits. Measured in docs/boundary.md (issue 17).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from ragsec_core.data.trace import Trace
from ragsec_core.retrieval.embed import shared_embedder
from ragsec_core.traceback.splice import claim_span


def claim_sentence(text: str, anchor: str) -> str | None:
    """The first sentence of `text` that states `anchor` (`splice.claim_span`; None when none does on its own)."""
    span = claim_span(text, anchor)
    return text[span[0] : span[1]] if span else None


def alike_copies(trace: Trace, anchor: str, reported: Sequence[int], exclude: set[int]) -> list[int]:
    """The used holders of `anchor` outside `reported` and `exclude` whose claim sentence is as close to a
    reported holder's as the least alike two reported holders' are to each other (module docstring), in
    rank order."""
    claims = {i: c for i in trace.used if (c := claim_sentence(trace.hits[i].text, anchor)) is not None}
    known = [i for i in reported if i in claims]
    candidates = [i for i in claims if i not in reported and i not in exclude]
    if len(known) < 2 or not candidates:
        return []
    order = known + candidates
    vectors = dict(zip(order, shared_embedder().embed([claims[i] for i in order]), strict=True))
    bar = min(_cosine(vectors[a], vectors[b]) for a, b in combinations(known, 2))
    return [i for i in candidates if max(_cosine(vectors[i], vectors[j]) for j in known) >= bar]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    """MiniLM's embeddings are normalised: the dot product is the cosine."""
    return float(a @ b)
