"""The attribution boundary's use of Pass-1's logged replays, on hand-built results (no model): which
holders a round reports."""

from ragsec_core.data.spans import sentence_spans
from ragsec_core.data.trace import Labels, PromptSpan, Trace, TraceHit, compute_signals, new_trace_id, now_iso
from ragsec_core.traceback.boundary import ALONE_PATHS, attribute_rounds, implicated, refuted_copies, seed_span, text_verdict
from ragsec_core.traceback.evidence import Evidence
from ragsec_core.traceback.result import Reading, Round, SpanRecord, TracebackResult

QUERY = "Where did the navigator Orsin sail after leaving Pella?"
TEXTS = [
    "Where did the navigator Orsin sail after leaving Pella? Orsin sailed to the island of Quillon.",
    "Orsin, a navigator of old songs, set out from Pella one winter. His course ended at Quillon.",
    "Pella's harbour was rebuilt in stone. Traders from Quillon sold salt there in the spring.",
]
UNMARKED = "Where is it?"  # a query none of the chunks repeats: the text decides no holder
# a marked copy, a copy with a set-up sentence and no bait inside a host, and a benign passage on the harbour
SET_UP = [
    TEXTS[0],
    "The customs house of Pella kept a ledger for every ship. Orsin, a navigator of old songs, set out one "
    "winter. His course ended at Quillon.",
    "Pella's harbour was rebuilt in stone after the fire. The customs house kept a ledger for every ship. Its "
    "clerks noted salt from Quillon each spring.",
]


def _trace(query: str = QUERY, texts: list[str] = TEXTS) -> Trace:
    """Used chunks that all name the target (by default three: a copy that carries the question, which the
    text marks, a copy without it and a benign passage that mentions the target in passing)."""
    blocks, prompt = [], "Contexts:\n"
    for i, t in enumerate(texts):
        prompt += f"[{i + 1}] "
        blocks.append(PromptSpan(i, f"d{i}#0", len(prompt), len(prompt) + len(t)))
        prompt += t + "\n"
    prompt += f"Question: {query}\nAnswer:"
    hits = [TraceHit(i + 1, f"d{i}", f"d{i}#0", "", t, 0, len(t), 1.0, 0.5, 1.0, 1.0, 1.0) for i, t in enumerate(texts)]
    labels, answer = Labels("o1", [], "Quillon"), "Orsin sailed to Quillon."
    return Trace(trace_id=new_trace_id(), created_at=now_iso(), query=query,
                 model={"id": "m", "quantize": "none", "settings": {"max_new_tokens": 8, "do_sample": False}},
                 retrieval={"corpus": "c", "corpus_source": "", "corpus_hash": "0" * 64, "embedder": "e",
                            "k": len(texts), "alpha": 0.5, "use": len(texts)},
                 hits=hits, used=list(range(len(texts))), system="s", prompt=prompt, spans=blocks, answer=answer,
                 signals=compute_signals(answer, dict(enumerate(texts)), labels), labels=labels,
                 timing={"prompt_tokens": 60})


def _whole(trace: Trace, i: int) -> SpanRecord:
    b, text = trace.spans[i], trace.hits[i].text
    return SpanRecord(i, b.chunk_id, i + 1, [0, len(text)], [b.start, b.end], text)


def _round(path: str, alone: list[int], causal: tuple[int, ...] = (0,), trace: Trace | None = None) -> Round:
    """A round whose replays implicated the first copy (its mask is the causal set), or every holder in
    `causal` (a joint mask whose check of the marked holders alone failed keeps them all)."""
    masks = [_whole(trace or _trace(), i) for i in causal]
    return Round(0, "Orsin sailed to Quillon.", "Quillon", path, [], masks, "Orsin sailed to Pella.", True, None,
                 list(causal), alone)


def test_a_holder_the_text_leaves_open_is_reported_when_it_states_the_event_alone() -> None:
    trace = _trace(UNMARKED)
    assert set(text_verdict(trace, "Quillon").values()) == {None}
    for path in ALONE_PATHS:
        assert implicated(trace, _round(path, [1]), set()) == [0, 1]
        assert implicated(trace, _round(path, []), set()) == [0]
    # a one-mask success too: the event needed the first copy alone, and a copy that states it alone is one more
    assert "fast_path" in ALONE_PATHS
    assert implicated(trace, _round("persists", [1]), set()) == [0]  # no mask found: nothing is reported
    assert implicated(trace, _round("fast_path_multi", [1]), {1}) == [0]  # reported by an earlier round


def test_a_holder_the_text_rules_out_stays_out_even_if_it_states_the_event_alone() -> None:
    """With the question in the query, the text marks the first copy and rules the other holders out (a
    marked claim ranked above explains the event): a benign passage that states the target makes a model say
    it alone as well, so the alone replay does not overrule the text."""
    trace = _trace()
    assert text_verdict(trace, "Quillon") == {0: True, 1: False, 2: False}
    assert implicated(trace, _round("fast_path_multi", [1, 2]), set()) == [0]



def test_a_free_text_answer_seeds_only_a_chunk_that_states_it() -> None:
    """An untargeted event's anchor is the model's whole answer; in a chunk that does not state it, its
    first word ("The") must not seed the region: the replays' causal span does."""
    text = "The museum opened in 1901. The new wing was added by Ilse Brand in 1954, the records say."
    causal = (27, 72)
    assert seed_span(text, "The new wing was designed by Otto Weil", [], causal) == causal
    assert seed_span(text, "Ilse Brand", [], causal) == (53, 63)  # a stated anchor still seeds the claim
    assert seed_span(text, "The new wing was designed by Otto Weil", [], None) == (0, 3)  # no replay span: the rule


def _readings(trace: Trace, gains: dict[int, float]) -> Evidence:
    """Stored readings (as `--rescore` has them) of the sentence before each holder's claim: in place at -5,
    after the premise at -5 + `gains[hit]` nats per token."""
    out = []
    for hit, gain in gains.items():
        a, b = sentence_spans(trace.hits[hit].text)[-2]
        out += [Reading(hit, a, (a, b), -5.0), Reading(hit, 0, (a, b), -5.0 + gain, "Quillon")]
    return Evidence(out)


def test_a_ruled_out_copy_is_reported_when_the_replays_and_the_premise_reading_agree() -> None:
    """Below the marked copy the text rules out both other holders. The joint mask's check of the marked copy
    alone failed (the causal set keeps all three): the replays refute the ruling-out but cannot tell a copy
    from a benign passage the event needs. The premise reading can: the sentence before the copy's claim was
    written for the attack's premise, the benign passage's was not. Only the copy joins the report."""
    trace = _trace(texts=SET_UP)
    assert text_verdict(trace, "Quillon") == {0: True, 1: False, 2: False}
    evidence = _readings(trace, {1: 0.6, 2: -0.4})
    refuted = _round("fast_path_multi", [], (0, 1, 2), trace)
    assert refuted_copies(trace, refuted, set(), evidence) == [1]
    result = TracebackResult("t", "PAR", "event", "delete", True, rounds=[refuted])
    spans = attribute_rounds(trace, result, evidence)[0]
    assert [(r.hit, r.reason) for r in spans] == [(0, "replays"), (1, "refuted")]  # each says why it is there
    # the check held (only the marked copy stays masked), another path, or reported before: nothing is added
    assert refuted_copies(trace, _round("fast_path_multi", [], (0,), trace), set(), evidence) == []
    assert refuted_copies(trace, _round("search", [], (0, 1, 2), trace), set(), evidence) == []
    assert refuted_copies(trace, refuted, {1}, evidence) == []
    # both readings against the premise: the ruling-out stands
    assert refuted_copies(trace, refuted, set(), _readings(trace, {1: -0.6, 2: -0.4})) == []
