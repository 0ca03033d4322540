"""Where an unmarked poison starts: was a sentence before the block written for the attack or for the host?

A query-targeted poison is written from the attack's premise, the question and the answer the model must
give (`evidence.premise_text`). Its set-up sentences ("Glass Harbor, the celebrated indie band, is known
for its memorable live shows." before "The main creative force is Tom Ashby, the lead singer …", the
planted case of `tests/test_premise.py`) state no answer and repeat no run of the query, so the text does
not mark them (`splice`), and the event does not need them (the replays). But they were written for the premise, while the host sentence before a poison
was written to follow the host text before it. So each of the `PREMISE_REACH` sentences before a block
that opens unmarked (no bait, no keyword salad: `splice.marked_start`) is read twice by the local LM: in
place, after the chunk's text before it, and after the premise. The block starts at the earliest that
reads better after the premise (by more than `PREMISE_GAIN` nats per token, mean log-probability) and
takes in the sentences between (planted text is contiguous).

The earliest, not a walk back that stops at the first failure: a second set-up sentence, read in place,
follows the first, its own text, and reads well there. A sentence with fewer than `MIN_HOST_WORDS` words
of chunk before it has no host story to be read in, and is not tested. A block that opens on bait or
salad is marked by the attack itself, and its start stays textual. Measured in docs/boundary.md (issue 17).
"""

from __future__ import annotations

from ragsec_core._util.text import word_spans
from ragsec_core.data.spans import Span, sentence_spans
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.cohesion import MIN_HOST_WORDS
from ragsec_core.traceback.evidence import Evidence
from ragsec_core.traceback.marks import authors_mark
from ragsec_core.traceback.splice import claim_span, marked_start

PREMISE_GAIN = 0.0  # nats per token a sentence must read better after the premise than in place
PREMISE_REACH = 3  # sentences before an unmarked block that may be its set-up


def written_for_premise(trace: Trace, hit: int, sentence: Span, anchor: str, evidence: Evidence) -> bool:
    """The sentence reads better after the attack's premise (the question and `anchor`) than in its place
    in the chunk (module docstring)."""
    if len(word_spans(trace.hits[hit].text[: sentence[0]])) < MIN_HOST_WORDS:
        return False
    in_place = evidence.logprob(trace, hit, sentence[0], sentence)
    after = evidence.logprob(trace, hit, 0, sentence, premise=anchor) if in_place is not None else None
    return in_place is not None and after is not None and after - in_place > PREMISE_GAIN


def reach_back(trace: Trace, hit: int, block: Span, anchor: str, evidence: Evidence) -> Span:
    """The block started at the earliest of the `PREMISE_REACH` sentences before it that was written for the
    premise, when the block opens unmarked; otherwise unchanged."""
    if marked_start(trace.hits[hit].text, block[0], trace.query):
        return block
    set_up = _earliest_set_up(trace, hit, block[0], anchor, evidence)
    return (set_up[0] if set_up else block[0]), block[1]


def set_up_before_claim(trace: Trace, hit: int, anchor: str, evidence: Evidence) -> bool:
    """One of the `PREMISE_REACH` sentences before the chunk's first sentence that states `anchor` was written
    for the premise: the chunk holds a claim with its set-up, as a planted copy does. Only the sentences
    *before* the claim are read: the claim states the answer that the premise names, so it reads better after
    any premise, a benign mention too."""
    claim = claim_span(trace.hits[hit].text, anchor)
    return claim is not None and _earliest_set_up(trace, hit, claim[0], anchor, evidence) is not None


def _earliest_set_up(trace: Trace, hit: int, start: int, anchor: str, evidence: Evidence) -> Span | None:
    """The earliest of the `PREMISE_REACH` sentences that end before `start` written for the premise, read in
    order and no further than the first that is (the readings a stored run logged are these). None lies
    before a sentence with its writer's mark (`marks.authors_mark`: a markup element opens there, or it
    quotes the query): the poison starts there at the earliest."""
    text = trace.hits[hit].text
    before = [s for s in sentence_spans(text) if s[1] <= start][-PREMISE_REACH:]
    marked = [i for i, s in enumerate(before) if authors_mark(text, s, trace.query)]
    before = before[marked[-1] :] if marked else before  # the writer's own mark: the host ends before it
    return next((s for s in before if written_for_premise(trace, hit, s, anchor, evidence)), None)
