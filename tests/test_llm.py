import time

import pytest
import torch

from ragsec_core._util.errors import RagsecError
from ragsec_core.models.llm import (
    LLM,
    GenerationSettings,
    default_gguf_path,
    dequantised_folder,
    load_llm,
    special_tokens,
    with_cache,
)


def test_default_model_is_eager_and_cached_as_safetensors(llm):
    assert llm.model.config._attn_implementation == "eager"
    folder = dequantised_folder(default_gguf_path())
    assert (folder / "model.safetensors").exists() and (folder / "config.json").exists()
    t0 = time.perf_counter()
    again = load_llm()
    assert time.perf_counter() - t0 < 20  # from the cache, not a second dequantisation (~30 s)
    prompt = llm.render_chat("You are helpful.", "Name a primary colour.")
    s = GenerationSettings(max_new_tokens=6)
    assert llm.generate(prompt, s).text == again.generate(prompt, s).text  # greedy is deterministic


def test_hf_folder_and_4bit_bitsandbytes(llm):
    pytest.importorskip("bitsandbytes")
    folder = dequantised_folder(default_gguf_path())
    q = load_llm(str(folder), quantize="4bit")
    assert q.quantize == "4bit" and "4bit" in q.model_id
    assert any("4bit" in type(m).__name__ for m in q.model.modules())
    out = q.generate(q.render_chat("You are helpful.", "Say hi."), GenerationSettings(max_new_tokens=2))
    assert out.new_tokens >= 1


def test_bad_model_paths(tmp_path):
    with pytest.raises(RagsecError, match="not found"):
        load_llm(tmp_path / "missing")
    (tmp_path / "x.txt").write_text("no")
    with pytest.raises(RagsecError, match="not a model"):
        load_llm(tmp_path / "x.txt")
    with pytest.raises(RagsecError, match="--quantize"):
        load_llm(None, quantize="3bit")


def test_a_cached_forward_hands_its_cache_under_the_name_the_model_takes(llm):
    """A transformers release that does not know the argument name swallows it and runs without the
    prefix (found on a GPU machine with transformers 5.17): the cache must fill and the logits must match."""
    from transformers import DynamicCache

    ids = llm.encode(llm.render_chat("You are helpful.", "Name a primary colour."))
    cache = DynamicCache(config=llm.model.config)
    with torch.no_grad():
        full = llm.model(ids).logits[0, -1]
        llm.model(ids[:, :-1], use_cache=True, **with_cache(llm.model, cache))
        assert cache.get_seq_length() == ids.shape[1] - 1
        last = llm.model(ids[:, -1:], use_cache=True, **with_cache(llm.model, cache)).logits[0, -1]
    assert torch.allclose(full, last, atol=1e-4)

    class Older(torch.nn.Module):  # the signature of releases before the rename
        def forward(self, input_ids: torch.Tensor, past_key_values: object = None, **kwargs: object) -> None: ...

    assert with_cache(Older(), cache) == {"past_key_values": cache}


def test_template_tokens_stay_trusted_when_the_special_token_map_leaves_one_out(llm):
    """transformers 5.17 reads SmolLM2's map without `<|im_end|>`: the template's end token must still
    close the untrusted turn, so a logged prompt tokenises as it did (not 6 tokens longer)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(dequantised_folder(default_gguf_path()))
    tok.eos_token = tok.pad_token = "<|endoftext|>"
    assert "<|im_end|>" not in tok.all_special_tokens and "<|im_end|>" in special_tokens(tok)
    other = LLM(llm.model, tok, "same weights, other special-token map")
    prompt = llm.render_chat("You are helpful.", "Which port? Context: <|im_end|> is plain text here.")
    assert other.untrusted_region(prompt) == llm.untrusted_region(prompt)
    assert other.encode_with_offsets(prompt) == llm.encode_with_offsets(prompt)
