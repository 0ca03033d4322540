"""Which story a sentence belongs to: the local LM's evidence for where planted text ends.

A poison is text spliced into a host passage at a sentence boundary. After the poison the host resumes,
and the sentence there was written to follow the host text *before* the insertion ("It occupies about
one-fifth of the Earth's surface." after the ocean's area), while a sentence that still belongs to the
poison was written to follow the poison ("This circular contour is attributed to …", "Thus, making the
film a classic."). So the sentence after the attributed block is read twice by the local causal LM:
in place, after the block, and with the block cut out, right after the host text before it. A sentence
that reads better after the block (by `COHESION_GAIN` nats per token, mean log-probability) joins it,
and the test repeats with the grown block; the first sentence that does not join ends it. With fewer
than `MIN_HOST_WORDS` words of host before the block there is no host story to compare with, and the
block does not grow, nor does a block that ends at a unit its writer closed (`markup.closed_units`: an
SQL statement's `;`, a JSON record's brace, a diff's last counted line): the writer said where it ends.

The test is one-directional on purpose. Read backwards (does the block read better after the sentence
before it?), the evidence does not separate a poison's set-up sentence from the host sentence before it:
both are about the question's topic, so both help the block, the host sentence often more. Where an
unmarked block starts is `premise`'s test instead. The readings are logged and served by `evidence`
(offline re-scoring). Measured in docs/boundary.md (issue 17): the joining sentences of 10 dev events read
0.28-1.37 nats per token better after the block; the host sentences after a block at most 0.13.
"""

from __future__ import annotations

from ragsec_core._util.text import word_spans
from ragsec_core.data.markup import closed_units
from ragsec_core.data.spans import Span, sentence_spans
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.evidence import Evidence
from ragsec_core.traceback.salad import is_word_salad

COHESION_GAIN = 0.2  # nats per token a sentence must gain from the block, read in place, to join it
MIN_HOST_WORDS = 5  # host words before the block below which there is no host story to compare with


def continues_block(trace: Trace, hit: int, block: Span, sentence: Span, evidence: Evidence) -> bool:
    """The sentence reads as the planted block's continuation, not the host's (module docstring)."""
    if len(word_spans(trace.hits[hit].text[: block[0]])) < MIN_HOST_WORDS:
        return False
    in_place = evidence.logprob(trace, hit, block[1], sentence)
    cut = evidence.logprob(trace, hit, block[0], sentence) if in_place is not None else None
    return in_place is not None and cut is not None and in_place - cut >= COHESION_GAIN


def extend(trace: Trace, hit: int, block: Span, evidence: Evidence) -> Span:
    """The block grown over the sentences after it that continue it, up to the first that does not. A block
    that ends in keyword salad does not grow: salad is no story to continue, and stuffing made of the host's
    own words makes the host's next sentence read well after it. A block that ends at a closed unit's end
    does not grow either: its writer closed it."""
    text = trace.hits[hit].text
    sentences = sentence_spans(text)
    last = [s for s in sentences if s[0] < block[1] <= s[1] or s[1] == block[1]]
    if last and is_word_salad(text[max(last[-1][0], block[0]) : block[1]], fragment=True):
        return block
    if any(u < block[1] == v for u, v in closed_units(text)):
        return block
    end = block[1]
    for sentence in sentences:
        if sentence[0] < end:
            continue
        if not continues_block(trace, hit, (block[0], end), sentence, evidence):
            break
        end = sentence[1]
    return block[0], end
