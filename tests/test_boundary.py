"""The attribution boundary's use of Pass-1's logged replays, on hand-built results (no model): which
holders a round reports."""

from ragsec_core.data.trace import Labels, PromptSpan, Trace, TraceHit, compute_signals, new_trace_id, now_iso
from ragsec_core.traceback.boundary import ALONE_PATHS, implicated, seed_span, text_verdict
from ragsec_core.traceback.result import Round, SpanRecord

QUERY = "Where did the navigator Orsin sail after leaving Pella?"
TEXTS = [
    "Where did the navigator Orsin sail after leaving Pella? Orsin sailed to the island of Quillon.",
    "Orsin, a navigator of old songs, set out from Pella one winter. His course ended at Quillon.",
    "Pella's harbour was rebuilt in stone. Traders from Quillon sold salt there in the spring.",
]
UNMARKED = "Where is it?"  # a query none of the chunks repeats: the text decides no holder


def _trace(query: str = QUERY) -> Trace:
    """Three used chunks that all name the target: a copy that carries the question (the text marks it),
    a copy without it and a benign passage that mentions the target in passing."""
    blocks, prompt = [], "Contexts:\n"
    for i, t in enumerate(TEXTS):
        prompt += f"[{i + 1}] "
        blocks.append(PromptSpan(i, f"d{i}#0", len(prompt), len(prompt) + len(t)))
        prompt += t + "\n"
    prompt += f"Question: {query}\nAnswer:"
    hits = [TraceHit(i + 1, f"d{i}", f"d{i}#0", "", t, 0, len(t), 1.0, 0.5, 1.0, 1.0, 1.0) for i, t in enumerate(TEXTS)]
    labels, answer = Labels("o1", [], "Quillon"), "Orsin sailed to Quillon."
    return Trace(trace_id=new_trace_id(), created_at=now_iso(), query=query,
                 model={"id": "m", "quantize": "none", "settings": {"max_new_tokens": 8, "do_sample": False}},
                 retrieval={"corpus": "c", "corpus_source": "", "corpus_hash": "0" * 64, "embedder": "e", "k": 3,
                            "alpha": 0.5, "use": 3},
                 hits=hits, used=[0, 1, 2], system="s", prompt=prompt, spans=blocks, answer=answer,
                 signals=compute_signals(answer, dict(enumerate(TEXTS)), labels), labels=labels,
                 timing={"prompt_tokens": 60})


def _whole(trace: Trace, i: int) -> SpanRecord:
    b = trace.spans[i]
    return SpanRecord(i, b.chunk_id, i + 1, [0, len(TEXTS[i])], [b.start, b.end], TEXTS[i])


def _round(path: str, alone: list[int]) -> Round:
    """A round whose replays implicated the first copy (its mask is the causal set)."""
    causal = [_whole(_trace(), 0)]
    return Round(0, "Orsin sailed to Quillon.", "Quillon", path, [], causal, "Orsin sailed to Pella.", True, None, [0], alone)


def test_a_holder_the_text_leaves_open_is_reported_when_it_states_the_event_alone() -> None:
    trace = _trace(UNMARKED)
    assert set(text_verdict(trace, "Quillon").values()) == {None}
    for path in ALONE_PATHS:
        assert implicated(trace, _round(path, [1]), set()) == [0, 1]
        assert implicated(trace, _round(path, []), set()) == [0]
    # a one-mask success: the event needed that chunk, so a chunk that also states it alone is not poison by that
    assert implicated(trace, _round("fast_path", [1]), set()) == [0]
    assert implicated(trace, _round("persists", [1]), set()) == [0]
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
