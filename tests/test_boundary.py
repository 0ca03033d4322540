"""The attribution boundary's use of Pass-1's logged replays, on hand-built results (no model): which
holders a round reports, and what the model said from a chunk left alone."""

from ragsec_core.data.trace import Labels, PromptSpan, Trace, TraceHit, compute_signals, new_trace_id, now_iso
from ragsec_core.traceback.boundary import ALONE_PATHS, implicated, said_alone
from ragsec_core.traceback.result import Round, SpanRecord, TracebackResult
from ragsec_core.traceback.result import Test as Replay

QUERY = "Where did the navigator Orsin sail after leaving Pella?"
TEXTS = [
    "Where did the navigator Orsin sail after leaving Pella? Orsin sailed to the island of Quillon.",
    "Orsin, a navigator of old songs, set out from Pella one winter. His course ended at Quillon.",
    "Pella's harbour was rebuilt in stone. Traders from Quillon sold salt there in the spring.",
]


def _trace() -> Trace:
    """Three used chunks that all name the target: a copy that carries the question (the text marks it),
    a copy without it and a benign passage that mentions the target in passing."""
    blocks, prompt = [], "Contexts:\n"
    for i, t in enumerate(TEXTS):
        prompt += f"[{i + 1}] "
        blocks.append(PromptSpan(i, f"d{i}#0", len(prompt), len(prompt) + len(t)))
        prompt += t + "\n"
    prompt += f"Question: {QUERY}\nAnswer:"
    hits = [TraceHit(i + 1, f"d{i}", f"d{i}#0", "", t, 0, len(t), 1.0, 0.5, 1.0, 1.0, 1.0) for i, t in enumerate(TEXTS)]
    labels, answer = Labels("o1", [], "Quillon"), "Orsin sailed to Quillon."
    return Trace(trace_id=new_trace_id(), created_at=now_iso(), query=QUERY,
                 model={"id": "m", "quantize": "none", "settings": {"max_new_tokens": 8, "do_sample": False}},
                 retrieval={"corpus": "c", "corpus_source": "", "corpus_hash": "0" * 64, "embedder": "e", "k": 3,
                            "alpha": 0.5, "use": 3},
                 hits=hits, used=[0, 1, 2], system="s", prompt=prompt, spans=blocks, answer=answer,
                 signals=compute_signals(answer, dict(enumerate(TEXTS)), labels), labels=labels,
                 timing={"prompt_tokens": 60})


def _round(path: str, alone: list[int]) -> Round:
    return Round(0, "Orsin sailed to Quillon.", "Quillon", path, [], [], "Orsin sailed to Pella.", True, None, [0], alone)


def test_a_holder_that_states_the_event_alone_is_reported_unless_one_mask_sufficed() -> None:
    trace = _trace()
    for path in ALONE_PATHS:
        assert implicated(trace, _round(path, [1]), set()) == [0, 1]
    # a one-mask success: the event needed that chunk, so a chunk that also states it alone is not poison by that
    assert implicated(trace, _round("fast_path", [1]), set()) == [0]
    assert implicated(trace, _round("persists", [1]), set()) == [0]  # the text still reports the marked copy
    assert implicated(trace, _round("fast_path_multi", [1]), {1}) == [0]  # reported by an earlier round


def test_what_the_model_said_from_a_chunk_left_alone_is_read_from_its_replay() -> None:
    trace = _trace()
    rnd = _round("fast_path_multi", [1])

    def whole(i: int) -> SpanRecord:
        b = trace.spans[i]
        return SpanRecord(i, b.chunk_id, i + 1, [0, len(TEXTS[i])], [b.start, b.end], TEXTS[i])

    result = TracebackResult("t", "PAR", "event", "delete", True, rounds=[rnd], tests=[
        Replay(0, "alone", [whole(0), whole(2)], "His course ended at Quillon.", 0.0, False, 1.0, False),
        Replay(0, "alone", [whole(0), whole(1)], "Orsin sailed to Pella.", 0.0, True, 1.0, False),
        Replay(1, "alone", [whole(0), whole(2)], "later round", 0.0, False, 1.0, False),
    ])
    # only holders the round reports as alone, and only its own round's replays
    assert said_alone(result, rnd) == {1: "His course ended at Quillon."}
