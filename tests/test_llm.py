import time

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.models.llm import GenerationSettings, default_gguf_path, dequantised_folder, load_llm


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
