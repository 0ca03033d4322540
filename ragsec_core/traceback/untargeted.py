"""What Pass-1's `restore` objective (an untargeted event: the correct answer lost) changes in the search.

A targeted event is undone by removing text; an untargeted one only by bringing the correct answer back,
so the text that states it must stay. Three consequences, each a pure function of the trace:

* the *witnesses*, the used chunks that state a correct answer, are never masked whole in the chunk
  screening: such a replay deletes the answer it is waiting for and cannot succeed;
* when no other chunk's mask brings the answer back, the poison shares a chunk with the answer (a
  misleading article embedded beside it, a typo-perturbed copy of the passage that holds it), so the
  sentence search runs in the best-ranked witness;
* no sentence that states a correct answer is a candidate, and the context check masks every other
  sentence at once (if even that does not bring the answer back, no mask can).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.spans import Span, overlaps, sentence_spans
from ragsec_core.data.trace import Labels, Trace, states_correct, states_target


def label_verdict(objective: str, answer: str, labels: Labels) -> bool | None:
    """Whether a replayed answer undoes the event, judged by the labels: `restore`, a correct answer is
    back; `oracle`, the target is gone; None where the labels cannot judge (`event`, or no target). Pass-1's
    tests and the benchmark's gold replay judge with this one rule."""
    if objective == "restore":
        return states_correct(answer, labels)
    if objective == "oracle" and labels.target:
        return not states_target(answer, labels)
    return None


def check_labels(objective: str, labels: Labels) -> None:
    """`restore` judges by the labelled correct answers: without them it is bad input, said once."""
    if objective == "restore" and not labels.answers:
        raise RagsecError("the 'restore' objective needs the trace's labelled correct answers (labels.answers); "
                          "this trace has none")


def witnesses(trace: Trace, live: Sequence[int]) -> list[int]:
    """The live used chunks that state a labelled correct answer, in rank order."""
    return [i for i in live if states_correct(trace.hits[i].text, trace.labels)]


def states_answer(trace: Trace, hit: int, span: Span) -> bool:
    """One chunk-local span states a labelled correct answer."""
    return states_correct(trace.hits[hit].text[span[0]:span[1]], trace.labels)


def answer_free(trace: Trace, hit: int, spans: Sequence[Span]) -> list[Span]:
    """The spans of one chunk that do not state a correct answer (the only ones a restore may mask)."""
    return [s for s in spans if not states_answer(trace, hit, s)]


def answer_sentences(trace: Trace) -> list[Span]:
    """Every sentence of the used chunks that states a correct answer, in prompt coordinates: what a
    restore never masks (the benchmark's gold replay spares them too)."""
    return trace.in_prompt((i, s) for i in trace.used for s in sentence_spans(trace.hits[i].text)
                           if states_answer(trace, i, s))


def context_masks(trace: Trace, live: Sequence[int], masked: dict[int, list[Span]]) -> list[tuple[int, Span]]:
    """The restore context check's masks: every sentence of the live chunks that states no correct answer
    and that no earlier round masked (`masked`: chunk-local masks by hit)."""
    return [(i, s) for i in live for s in answer_free(trace, i, sentence_spans(trace.hits[i].text))
            if not any(overlaps(s, m) for m in masked.get(i, []))]
