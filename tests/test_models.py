"""The models layer's shared pieces on the real SmolLM2: one EOS set for Pass-0 generation, Pass-1 replay
and D-SCAN capture, and one perplexity for the PPL baselines and the Chameleon fluency filter."""

import math

import pytest

from ragsec_core.models import attention, replay
from ragsec_core.models.attention import generate_with_attention
from ragsec_core.models.llm import GenerationSettings, eos_ids
from ragsec_core.models.replay import ReplayEngine
from ragsec_core.models.scoring import perplexity, perplexity_of, token_nll
from ragsec_core.rag import render_prompt


@pytest.fixture(scope="module")
def prompt(llm) -> str:
    """A RAG prompt SmolLM2 answers in 7 tokens and then ends with `<|im_end|>`."""
    return render_prompt(llm, "What is the capital of Australia?", ["Canberra is the capital city of Australia."]).prompt


def _generated(llm, prompt: str, limit: int) -> list[int]:
    """The raw new token ids of transformers' own greedy `generate` (EOS included when it stopped on one)."""
    import torch

    ids = llm.encode(prompt)
    with torch.no_grad():
        out = llm.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=limit, do_sample=False,
                                 pad_token_id=llm.tokenizer.pad_token_id)
    return out[0, ids.shape[1]:].tolist()


def _three_ways(llm, prompt: str, limit: int):
    """(raw generate tokens, D-SCAN capture, Pass-1 replay answers: no reference and the answer as reference)."""
    s = GenerationSettings(max_new_tokens=limit)
    cap = generate_with_attention(llm, prompt, max_new_tokens=limit)[0]
    answers = [ReplayEngine(llm, prompt, s).replay(prompt, ref).answer for ref in ("", cap.text)]
    return _generated(llm, prompt, limit), cap, answers, llm.generate(prompt, s).text


def test_capture_and_replay_share_the_eos_set_generate_stops_on(llm):
    gen_cfg = llm.model.generation_config.eos_token_id
    expected = set(gen_cfg if isinstance(gen_cfg, list) else [gen_cfg])
    assert attention.eos_ids is replay.eos_ids is eos_ids  # one function, not two copies
    assert eos_ids(llm) == expected == {llm.tokenizer.convert_tokens_to_ids("<|im_end|>")}


def test_capture_replay_and_generate_end_on_the_same_token(llm, prompt):
    raw, cap, answers, text = _three_ways(llm, prompt, 24)
    assert len(raw) < 24 and raw[-1] in eos_ids(llm)  # the model stopped on EOS, well before the limit
    assert cap.stopped and cap.token_ids == raw[:-1]
    assert answers == [cap.text, cap.text] and text == cap.text


def test_a_token_only_the_tokenizer_calls_eos_stops_none_of_them(llm, prompt, monkeypatch):
    """With the generation config naming another EOS, `generate` runs past `<|im_end|>`; capture and replay
    must too (the old replay set, generation config plus tokenizer EOS, stopped there)."""
    unused = llm.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    monkeypatch.setattr(llm.model.generation_config, "eos_token_id", unused)
    raw, cap, answers, text = _three_ways(llm, prompt, 12)
    assert len(raw) == 12 and unused not in raw  # nothing stopped generate ...
    assert llm.tokenizer.eos_token_id in raw  # ... not even the tokenizer's EOS
    assert cap.token_ids == raw and not cap.stopped
    assert answers == [cap.text, cap.text] and text == cap.text


def test_perplexity_is_exp_mean_token_nll_and_degenerate_texts_score_one(llm):
    text = "The firewall blocks inbound traffic on port 23."
    nll, offsets = token_nll(llm, text)
    assert len(nll) == len(offsets) == len(llm.tokenizer(text, add_special_tokens=False)["input_ids"]) - 1
    assert perplexity(llm, [text])[0] == pytest.approx(math.exp(float(nll.double().mean())), rel=1e-9)
    assert perplexity(llm, ["", "Paris"]) == [1.0, 1.0]  # fewer than two tokens: nothing to score
    assert perplexity_of([60.0, 60.0]) == math.exp(50.0)  # clamped, never an overflow
    long = "word " * 700
    assert token_nll(llm, long, max_tokens=512)[0].shape == (511,)
