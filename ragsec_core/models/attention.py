"""Attention capture for D-SCAN: answer-token rows of every layer and head, mapped to prompt documents.

Why hooks instead of `output_attentions=True`: with `output_attentions=True` transformers collects every
layer's full attention tensor of every forward pass, and the prefill of a 600-token prompt alone is
30 layers x 9 heads x 600 x 600 floats (~400 MB). D-SCAN only needs the rows of the positions that
*produce* answer tokens, so a forward hook on each eager attention module keeps just those rows and drops
the rest as soon as the layer has run: memory is O(answer tokens x layers x heads x prompt tokens).
Eager attention returns its weights whatever `output_attentions` says (`eager_attention_forward`), and
the tests check that the hooked rows equal transformers' own `output_attentions=True` tensors.

Row convention: answer token y_t (t = 1..T) is produced by the forward pass at the position of y_{t-1}
(the last prompt token for y_1). Row t is that position's attention, so the same rows come out of the
generation's own incremental passes (KV cache) and of one teacher-forced pass over prompt + y_1..y_{T-1}.

Prompt tokens are mapped to documents through the Pass-0 trace's prompt offsets (`spans[i].start/end`,
character offsets in `trace.prompt`) and the fast tokenizer's character offset mapping: a token belongs
to document k when its character span overlaps the document's span. Byte-level BPE can split one
multi-byte character over several tokens; all of them carry that character's span, so all are mapped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ragsec_core._util.errors import RagsecError
from ragsec_core.models.llm import eos_ids, with_cache

DEFAULT_TEMPERATURE = 0.7  # for samples 2..N; sample 1 is always the greedy (Pass-0) answer


# ---------------------------------------------------------------- prompt token -> document map

@dataclass(frozen=True)
class PromptMap:
    """Token ids of a rendered prompt and, per document, the indices of its tokens."""

    input_ids: list[int]
    offsets: list[tuple[int, int]]
    doc_tokens: list[np.ndarray]  # per document (in span order), sorted token indices
    text: str = ""  # the rendered prompt itself: word-level regions (question echo, answer words) need it

    @property
    def n_tokens(self) -> int:
        return len(self.input_ids)

    @property
    def doc_lengths(self) -> np.ndarray:
        return np.array([len(t) for t in self.doc_tokens], dtype=np.int64)


def map_prompt(llm: Any, prompt: str, spans: Sequence[tuple[int, int]]) -> PromptMap:
    """Tokenise `prompt` exactly as generation does (`LLM.encode_with_offsets`: special-token strings inside
    passages stay plain text) and assign tokens to the character spans. A bare tokenizer is accepted for
    prompts with no untrusted text; it would misalign tokens on passages that spell template tokens."""
    tokenizer = getattr(llm, "tokenizer", llm)
    if not getattr(tokenizer, "is_fast", False):
        raise RagsecError("attention mapping needs a fast tokenizer (character offset mapping)")
    if hasattr(llm, "encode_with_offsets"):
        ids, raw = llm.encode_with_offsets(prompt)
    else:
        enc = tokenizer(prompt, add_special_tokens=False, return_offsets_mapping=True)
        ids, raw = list(enc["input_ids"]), enc["offset_mapping"]
    offsets = [(int(a), int(b)) for a, b in raw]
    starts = np.array([a for a, _ in offsets])
    ends = np.array([b for _, b in offsets])
    owner = np.full(len(ids), -1, dtype=np.int64)
    docs: list[np.ndarray] = []
    for k, (a, e) in enumerate(spans):
        if not 0 <= a <= e <= len(prompt):
            raise RagsecError(f"document span {k} [{a}, {e}) lies outside the prompt")
        hit = np.flatnonzero((np.minimum(ends, e) > np.maximum(starts, a)) & (ends > starts))
        if (owner[hit] >= 0).any():
            raise RagsecError(f"a prompt token overlaps documents {int(owner[hit][owner[hit] >= 0][0])} and {k}")
        owner[hit] = k
        docs.append(hit)
    return PromptMap(ids, offsets, docs, prompt)


# ---------------------------------------------------------------- capture

@dataclass
class AnswerAttention:
    """One generated answer with its attention rows (answer tokens only) and token probabilities.

    `rows[t, l, h, j]` is the attention of the position producing answer token t, layer l, head h, to
    prompt token j; `answer_mass[t, l, h]` is what that row gives to earlier answer tokens, so
    `rows.sum(-1) + answer_mass == 1` (softmax rows).
    """

    token_ids: list[int]
    text: str
    token_probs: np.ndarray  # (T,) model probability P(y_t | y_<t, X) of each answer token
    rows: np.ndarray  # (T, L, H, P) float32
    answer_mass: np.ndarray  # (T, L, H)
    stopped: bool = False  # ended with EOS (rather than max_new_tokens)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)


class _RowHook:
    """Forward hooks on every attention module that keep only the rows selected before each pass."""

    def __init__(self, model: Any, n_prompt: int) -> None:
        self.layers = _attention_modules(model)
        self.n_prompt = n_prompt
        self.select: slice | None = None
        self.kept: list[list[torch.Tensor]] = [[] for _ in self.layers]  # per layer: (B, H, q, kv) pieces
        self._handles = [m.register_forward_hook(self._make(i)) for i, m in enumerate(self.layers)]

    def _make(self, i: int) -> Callable[[Any, Any, Any], None]:
        def hook(module: Any, args: Any, output: Any) -> None:
            if self.select is None:
                return
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None:
                raise RagsecError("the model's attention returned no weights: load it with attn_implementation='eager'")
            self.kept[i].append(weights[:, :, self.select, :].detach().float().clone())

        return hook

    def close(self) -> None:
        for h in self._handles:
            h.remove()

    def take(self) -> list[torch.Tensor]:
        """Per layer, the kept rows of the last pass; then forget them."""
        out = [k.pop() for k in self.kept]
        return out


def _attention_modules(model: Any) -> list[Any]:
    layers = getattr(getattr(model, "model", model), "layers", None)
    if layers is None or not all(hasattr(layer, "self_attn") for layer in layers):
        raise RagsecError("attention capture supports decoder models with `model.layers[i].self_attn`")
    return [layer.self_attn for layer in layers]


def _split_rows(per_layer: list[torch.Tensor], n_prompt: int) -> tuple[np.ndarray, np.ndarray]:
    """(B, H, q, kv) per layer -> rows (B, q, L, H, P) over prompt columns and the answer-column mass."""
    stack = torch.stack(per_layer, dim=0)  # (L, B, H, q, kv)
    prompt = stack[..., :n_prompt]
    rest = stack[..., n_prompt:].sum(-1)
    rows = prompt.permute(1, 3, 0, 2, 4).cpu().numpy()
    mass = rest.permute(1, 3, 0, 2).cpu().numpy()
    return rows, mass


def generate_with_attention(
    llm: Any,
    prompt: str,
    max_new_tokens: int = 32,
    n_samples: int = 1,
    temperature: float = DEFAULT_TEMPERATURE,
    seed: int = 0,
) -> list[AnswerAttention]:
    """Decode `n_samples` answers in one batch sharing one prefill; sample 0 is greedy (= Pass-0).

    The prompt is prefilled once and its KV cache repeated for the batch, so N samples cost one prompt
    pass plus N-wide decoding steps. Rows after a sample's EOS are discarded.
    """
    from transformers import DynamicCache

    if n_samples < 1 or max_new_tokens < 1:
        raise RagsecError("n_samples and max_new_tokens must be >= 1")
    model, tok = llm.model, llm.tokenizer
    ids = llm.encode(prompt)
    n_prompt = int(ids.shape[1])
    eos = eos_ids(llm)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    hook = _RowHook(model, n_prompt)
    tokens: list[list[int]] = [[] for _ in range(n_samples)]
    probs: list[list[float]] = [[] for _ in range(n_samples)]
    rows: list[list[np.ndarray]] = [[] for _ in range(n_samples)]
    mass: list[list[np.ndarray]] = [[] for _ in range(n_samples)]
    done = [False] * n_samples
    try:
        with llm._lock, torch.no_grad():
            cache = DynamicCache(config=model.config)
            hook.select = slice(-1, None)  # prefill: only the last prompt position produces y_1
            out = model(ids, attention_mask=torch.ones_like(ids), use_cache=True, logits_to_keep=1, **with_cache(model, cache))
            r, m = _split_rows(hook.take(), n_prompt)
            if n_samples > 1:
                cache.batch_repeat_interleave(n_samples)
                r, m = np.repeat(r, n_samples, axis=0), np.repeat(m, n_samples, axis=0)
            logits = out.logits[:, -1].float().expand(n_samples, -1)
            mask_len = n_prompt
            for step in range(max_new_tokens):
                nxt = _choose(logits, temperature, gen)
                p = torch.softmax(logits, dim=-1).gather(1, nxt[:, None])[:, 0]
                for b in range(n_samples):
                    if done[b]:
                        continue
                    t = int(nxt[b])
                    if t in eos:
                        done[b] = True
                        continue
                    tokens[b].append(t)
                    probs[b].append(float(p[b]))
                    rows[b].append(r[b, 0])
                    mass[b].append(m[b, 0])
                if all(done) or step == max_new_tokens - 1:
                    break
                mask_len += 1
                hook.select = slice(None)
                out = model(
                    nxt[:, None].to(ids.device),
                    attention_mask=torch.ones((n_samples, mask_len), dtype=ids.dtype, device=ids.device),
                    use_cache=True,
                    **with_cache(model, cache),
                )
                r, m = _split_rows(hook.take(), n_prompt)
                logits = out.logits[:, -1].float()
    finally:
        hook.close()
    return [_answer(tok, tokens[b], probs[b], rows[b], mass[b], done[b], model, n_prompt, b) for b in range(n_samples)]


def teacher_forced_attention(llm: Any, prompt: str, answer_ids: Sequence[int]) -> AnswerAttention:
    """The same rows from one forward pass over prompt + y_1..y_{T-1} (no generation)."""
    model, tok = llm.model, llm.tokenizer
    ids = llm.encode(prompt)
    n_prompt = int(ids.shape[1])
    answer_ids = list(answer_ids)
    if not answer_ids:
        return _answer(tok, [], [], [], [], True, model, n_prompt, 0)
    full = torch.cat([ids, torch.tensor([answer_ids[:-1]], dtype=ids.dtype, device=ids.device)], dim=1)
    hook = _RowHook(model, n_prompt)
    try:
        with llm._lock, torch.no_grad():
            hook.select = slice(n_prompt - 1, None)
            out = model(full, attention_mask=torch.ones_like(full), use_cache=False)
            r, m = _split_rows(hook.take(), n_prompt)
    finally:
        hook.close()
    logits = out.logits[0, n_prompt - 1 :].float()
    p = torch.softmax(logits, dim=-1).gather(1, torch.tensor(answer_ids)[:, None].to(logits.device))[:, 0]
    return _answer(tok, answer_ids, p.tolist(), list(r[0]), list(m[0]), True, model, n_prompt, 0)


def answer_token_ids(llm: Any, answer: str) -> list[int]:
    """Token ids for a stored answer text (used when a trace cannot be replayed token for token)."""
    return list(llm.tokenizer(answer, add_special_tokens=False, split_special_tokens=True)["input_ids"])


def _choose(logits: torch.Tensor, temperature: float, gen: torch.Generator) -> torch.Tensor:
    """Row 0 greedy, other rows sampled at `temperature` from the seeded generator."""
    greedy = logits.argmax(-1)
    if logits.shape[0] == 1:
        return greedy
    probs = torch.softmax(logits / max(temperature, 1e-6), dim=-1)
    sampled = torch.multinomial(probs.cpu(), 1, generator=gen)[:, 0].to(logits.device)
    sampled[0] = greedy[0]
    return sampled


def _answer(tok: Any, ids: list[int], probs: list[float], rows: list[np.ndarray], mass: list[np.ndarray],
            stopped: bool, model: Any, n_prompt: int, sample: int) -> AnswerAttention:
    cfg = model.config
    n_layers, n_heads = int(cfg.num_hidden_layers), int(cfg.num_attention_heads)
    r = np.stack(rows) if rows else np.zeros((0, n_layers, n_heads, n_prompt), dtype=np.float32)
    m = np.stack(mass) if mass else np.zeros((0, n_layers, n_heads), dtype=np.float32)
    text = tok.decode(ids, skip_special_tokens=True).strip()
    return AnswerAttention(list(ids), text, np.asarray(probs, dtype=np.float64), r, m, stopped, {"sample": sample})
