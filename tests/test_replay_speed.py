"""The optimised replay path (prefix KV reuse across variants, memo, teacher-forced greedy) gives the
same Pass-1 result as the naive path (plain `generate` + a full scoring forward per variant)."""

import pytest

from ragsec_core.data.spans import apply_masks
from ragsec_core.models.replay import NaiveReplayEngine, ReplayEngine
from ragsec_core.traceback.ragcharacter import run_pass1


@pytest.fixture(scope="module")
def bastion(pipeline):
    trace = pipeline("secops", "embedded").ask("What is the hostname of the bastion host?")
    assert trace.signals.par, trace.answer
    return trace


def _summary(res):
    """Everything Pass-1 decides: spans, flags, and every test's masks, answer and outcome."""
    tests = [(t.round, t.stage, [s.prompt for s in t.spans], t.answer, t.success) for t in res.tests]
    spans = [(s.hit, s.local, s.prompt) for s in res.attribution + res.causal]
    rounds = [(r.path, r.answer_after, r.resolved, r.reproduced) for r in res.rounds]
    return tests, spans, rounds, res.resolved, res.final_answer, res.mask_kind


def test_optimised_pass1_equals_the_naive_path_on_a_real_trace(llm, bastion):
    fast = run_pass1(llm, bastion)
    naive = run_pass1(llm, bastion, naive=True)
    assert _summary(fast) == _summary(naive)
    assert [t.influence for t in fast.tests] == pytest.approx([t.influence for t in naive.tests], abs=2e-3)
    assert fast.forward_pass_equivalents < naive.forward_pass_equivalents
    assert any(t.cached for t in fast.tests) and not any(t.cached for t in naive.tests)


def test_later_variants_reuse_the_longest_cached_prefix(llm, bastion):
    """A round-2 variant shares the round-1 mask, so it reuses that variant's cache, not just the base's."""
    blk = bastion.spans[0]
    first = (blk.start + 2, blk.start + 12)
    later = (bastion.spans[1].start + 5, bastion.spans[1].start + 25)
    # max_cached=1: storing the second prompt evicts the first (least recently used) cache
    engine, naive = ReplayEngine(llm, bastion.prompt, max_cached=1), NaiveReplayEngine(llm, bastion.prompt)
    one = apply_masks(bastion.prompt, [first])
    two = apply_masks(bastion.prompt, [first, later])
    r1, r2 = engine.replay(one, bastion.answer), engine.replay(two, bastion.answer)
    assert r1.reused_tokens == 0  # lazy: no up-front base forward
    assert r2.reused_tokens > len(llm.encode(bastion.prompt[: blk.start + 12])[0])
    assert len(engine._cached) == 1
    ref = naive.replay(two, bastion.answer)
    assert r2.answer == ref.answer
    assert r2.logprob == pytest.approx(ref.logprob, abs=1e-3)


def test_draft_lookup_takes_the_tokens_after_the_longest_recent_ngram():
    from ragsec_core.models.replay import _draft

    prompt = [5, 6, 7, 8, 9, 1, 2, 7, 8, 3, 4]
    assert _draft([prompt], [1, 7, 8], 3) == [3, 4]  # the latest "7 8" wins over the earlier one
    assert _draft([[9, 9, 2, 3, 4], prompt], [2, 3], 2) == [4]  # earlier sources first
    assert _draft([prompt], [42], 4) == []
    assert _draft([prompt], [6], 0) == []


def test_drafted_decoding_equals_plain_greedy_and_saves_forwards(llm, bastion, monkeypatch):
    """A reference that diverges at once makes the whole answer decoded after the divergence; verifying
    prompt-lookup drafts must give exactly `generate`'s greedy answer in fewer model calls."""
    from ragsec_core.models import replay

    calls = []
    hook = llm.model.register_forward_hook(lambda *a: calls.append(1))
    try:
        got = {}
        for k in (0, replay.DRAFT_TOKENS):
            monkeypatch.setattr(replay, "DRAFT_TOKENS", k)
            calls.clear()
            got[k] = (ReplayEngine(llm, bastion.prompt).replay(bastion.prompt, "Zebra"), len(calls))
    finally:
        hook.remove()
    want = llm.generate(bastion.prompt).text
    (plain, plain_calls), (drafted, drafted_calls) = got[0], got[replay.DRAFT_TOKENS]
    assert plain.answer == drafted.answer == want
    assert drafted_calls < plain_calls


def test_a_trace_whose_prompt_no_longer_tokenises_as_logged_is_refused(llm, bastion):
    """Same model, other software (a transformers release that tokenised logged prompts 6 tokens longer):
    the replays would be counterfactuals of another prompt, so both paths refuse before any replay."""
    from dataclasses import replace

    from ragsec_core._util.errors import RagsecError

    assert bastion.model["id"] == llm.model_id and bastion.timing["prompt_tokens"] == llm.encode(bastion.prompt).shape[1]
    drifted = replace(bastion, timing=bastion.timing | {"prompt_tokens": bastion.timing["prompt_tokens"] + 6})
    for naive in (False, True):
        with pytest.raises(RagsecError, match=r"tokenises to \d+ tokens here but"):
            run_pass1(llm, drifted, naive=naive)
    other = replace(drifted, model=drifted.model | {"id": "another model"})  # not this tokenizer's count: not checked
    assert run_pass1(llm, other).triggered
