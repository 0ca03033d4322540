"""Which benchmark events the planted text caused: one replay of the logged prompt without it.

The benchmark scores every triggered event against the planted text. But a victim can state the target
without any planted text: from the question itself (HotpotQA's "A or B?" names both answers), or from a
benign passage that says the same (a Wikipedia passage that names "Burt Reynolds" too). Then nothing in
the prompt's planted characters caused the event, and a traceback that reports no cause is right, yet
scores Char F1 0 against a gold span that did not matter. The benchmark tells the two apart with what only it knows, the gold spans
and the target: it replays the logged prompt once with every planted character masked (as Pass-1 masks)
and calls the event caused when the replayed answer no longer states the target (an untargeted event,
judged with Pass-1's `restore` objective: when it states a correct answer again). Results report Char F1
over all events and over the caused ones. This replay is evaluation, not part of any method, so it counts
in no method's cost.
"""

from __future__ import annotations

from typing import Any

from ragsec_core.bench.methods import gold_spans, summarise_method
from ragsec_core.data.spans import DEFAULT_MASK_MODE, Span, apply_masks, subtract
from ragsec_core.data.trace import Trace
from ragsec_core.models.endpoint import EndpointLLM
from ragsec_core.models.endpoint_replay import engine_for
from ragsec_core.models.llm import LLM
from ragsec_core.traceback.boundary import span_record
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE
from ragsec_core.traceback.snapshot import Snapshot
from ragsec_core.traceback.untargeted import answer_sentences, label_verdict


def gold_rule(objective: str, clean: bool = False) -> str:
    """Which characters the gold replay masks, by objective (stored beside its verdict so that a re-score
    re-judges an event judged by another rule): the planted text; for `restore`, with the clean corpus at
    hand (the benchmark's), the poisoned chunks put back as the clean corpus has them (a typo-perturbed
    copy garbles the sentence that states the answer: only its clean text undoes that), else the planted
    text less the sentences that state a correct answer (masking all of a perturbed copy deletes the
    answer the replay waits for)."""
    if objective != "restore":
        return "planted"
    return "clean-restored" if clean else "planted-less-answer-sentences"


def gold_replay(llm: LLM | EndpointLLM, trace: Trace, mask_mode: str = DEFAULT_MASK_MODE,
                objective: str = DEFAULT_OBJECTIVE, clean: Snapshot | None = None) -> dict[str, Any]:
    """{"answer": the victim's answer with the gold masked (`gold_rule`; `clean`: the clean corpus), "caused":
    that answer no longer states the target (with the `restore` objective: it states a correct answer),
    "rule"}. A trace without the label the judgement needs cannot be judged: no replay, both None."""
    restore = objective == "restore"
    rule = gold_rule(objective, clean is not None)
    if not (trace.labels.answers if restore else trace.labels.target):
        return {"answer": None, "caused": None, "rule": rule}
    subs = clean_text(trace, clean) if restore and clean is not None else {}
    masks = list(subs) or (subtract(gold_spans(trace), answer_sentences(trace)) if restore else gold_spans(trace))
    answer = engine_for(llm, trace).replay(apply_masks(trace.prompt, masks, mask_mode, subs), trace.answer).answer
    return {"answer": answer, "caused": label_verdict("restore" if restore else "oracle", answer, trace.labels),
            "rule": rule}


def clean_text(trace: Trace, clean: Snapshot) -> dict[Span, str]:
    """Every change in the poisoned used chunks, in prompt coordinates, with the clean corpus's text for it."""
    return {span_record(trace, i, h.local).prompt_span: h.trusted
            for i in trace.used if trace.hits[i].poison_spans for h in clean.hunks(trace, i)}


def summarise_caused(events: list[dict[str, Any]], methods: list[str], objective: str = DEFAULT_OBJECTIVE) -> dict[str, Any]:
    """Every method's summary over the caused events, how many events the planted text did not cause and
    how many of those RAGCharacter rightly left without a span, and how many were not judged (results
    written before the gold replay existed). Events are results rows: {"caused", "methods": {method: row}};
    `objective` says how the gold replay judged them (`gold_replay`)."""
    caused = [e for e in events if e.get("caused") is True]
    not_caused = [e for e in events if e.get("caused") is False]
    return {
        "events": len(caused), "not_caused": len(not_caused), "unjudged": len(events) - len(caused) - len(not_caused),
        "not_caused_left_blank": sum(e["methods"].get("ragcharacter", {}).get("pred_chars", 1) == 0 for e in not_caused),
        "objective": objective,
        "methods": {m: summarise_method([e["methods"][m] for e in caused if m in e["methods"]]) for m in methods},
    }


def caused_line(c: dict[str, Any], method: str) -> str:
    """One line for the tables: the method's scores over the caused events, and what the others were."""
    m = c["methods"].get(method, {})
    lo, hi = m.get("char_f1_ci95") or ("-", "-")
    without = ("misses the correct answer without the planted text too" if c.get("objective") == "restore"
               else "states the target without the planted text")
    line = (f"poison-caused events: {c['events']} ({method}: Char F1 {m.get('char_f1')} ({lo}-{hi}), IoU "
            f"{m.get('char_iou')}, FPR {m.get('char_fpr')}); not caused: {c['not_caused']} (the victim {without}; "
            f"{c['not_caused_left_blank']} left without a span)")
    return line + (f"; not judged: {c['unjudged']}" if c["unjudged"] else "")
