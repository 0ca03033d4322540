"""Text scoring under the local causal LM: per-token losses and perplexity of a text on its own.

One implementation for every caller that asks "how surprising is this text to the model": the PPL
baselines (which flag passages above a benign cutoff) and the Semantic Chameleon fluency filter (which
rejects substitutions above a cap). Sharing it keeps the two numbers comparable and lets `Fluency`'s
prefix-cached fast path be checked against one reference.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from ragsec_core.models.llm import with_cache

MAX_LOG_PPL = 50.0  # exp() of a larger mean NLL is meaningless and overflows past ~709


def token_nll(llm: Any, text: str, max_tokens: int | None = None) -> tuple[torch.Tensor, list[tuple[int, int]]]:
    """Per-token negative log-likelihood of `text` alone (no chat template, no special tokens) and each
    scored token's character offsets; at most `max_tokens` tokens are read (None: all).

    The first token has no context and is skipped (its loss would measure only the tokenizer's prior),
    so a text of fewer than two tokens scores nothing and runs no forward pass."""
    tok = llm.tokenizer
    fast = bool(getattr(tok, "is_fast", False))
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=fast)
    ids = list(enc["input_ids"])[:max_tokens]
    offsets = [tuple(o) for o in enc["offset_mapping"][: len(ids)]] if fast else [(0, 0)] * len(ids)
    if len(ids) < 2:
        return torch.zeros(0), []
    x = torch.tensor(ids, device=llm.device)
    with llm._lock, torch.no_grad():
        logits = llm.model(x[None]).logits[0, :-1].float()
    return F.cross_entropy(logits, x[1:], reduction="none"), offsets[1:]


def perplexity_of(nll: torch.Tensor | Sequence[float]) -> float:
    """exp(mean token NLL), the mean clamped at MAX_LOG_PPL; 1.0 (no surprise) when nothing was scored."""
    values = torch.as_tensor(nll, dtype=torch.float64)
    if not len(values):
        return 1.0
    return float(math.exp(min(float(values.mean()), MAX_LOG_PPL)))


def perplexity(llm: Any, texts: Sequence[str], max_tokens: int | None = None) -> list[float]:
    """Per-text perplexity under the local causal LM (the Chameleon paper's fluency filter used GPT-2)."""
    return [perplexity_of(token_nll(llm, t, max_tokens)[0]) for t in texts]


class Continuations:
    """How well parts of one text read right after prefixes of it, under the local causal LM.

    `mean_logprob(end, probe)` is the mean log-probability of the tokens of `text[probe]` read directly
    after `text[:end]` (one space between), whatever lies between them in the text. Every prefix is a
    prefix of the text, so all answers share one KV cache over the text, extended only as far as the
    longest prefix asked for and cropped per reading, plus a forward over the probe's tokens. The text is
    tokenised as untrusted (special-token strings stay plain text); `tokens` counts what went through the
    model (forward-pass equivalents)."""

    def __init__(self, llm: Any, text: str) -> None:
        self.llm, self.text = llm, text
        self.tokens = 0
        ids, offsets = llm.encode_text(text)
        self._ids, self._ends = ids, [b for _, b in offsets]
        bos = llm.tokenizer.bos_token_id
        self._head = [bos] if bos is not None else []
        self._cache: Any = None  # KV of the first `_done` positions of head + ids
        self._done = 0

    def mean_logprob(self, end: int, probe: tuple[int, int]) -> float:
        context = self.text[:end].rstrip()
        n = 0
        while n < len(self._ids) and self._ends[n] <= len(context):
            n += 1
        prefix = self._head + self._ids[:n]
        piece = self.text[probe[0] : probe[1]].strip()
        probe_ids, _ = self.llm.encode_text((" " if n else "") + piece)
        if not probe_ids:
            return 0.0
        if not prefix:  # no start token and no context: the first probe token has nothing to be read after
            prefix, probe_ids = probe_ids[:1], probe_ids[1:]
            if not probe_ids:
                return 0.0
        with self.llm._lock, torch.no_grad():
            cache = self._prefix_cache(prefix[:-1])
            feed = torch.tensor([prefix[-1:] + probe_ids], device=self.llm.device)
            logits = self.llm.model(feed, use_cache=True, **with_cache(self.llm.model, cache)).logits[0, :-1].float()
        self.tokens += feed.shape[1]
        target = torch.tensor(probe_ids, device=logits.device)
        return float(torch.log_softmax(logits, -1)[torch.arange(len(probe_ids)), target].mean())

    def _prefix_cache(self, prefix: list[int]) -> Any:
        """A private copy of the KV cache of `prefix` (a prefix of the start token and the text's tokens):
        the shared cache is first extended to cover it, then copied and cropped."""
        from transformers import DynamicCache

        if not prefix:
            return DynamicCache(config=self.llm.model.config)
        if self._cache is None:
            self._cache = DynamicCache(config=self.llm.model.config)
        if len(prefix) > self._done:
            more = torch.tensor([(self._head + self._ids)[self._done : len(prefix)]], device=self.llm.device)
            self.llm.model(more, use_cache=True, logits_to_keep=1, **with_cache(self.llm.model, self._cache))
            self.tokens += more.shape[1]
            self._done = len(prefix)
        cache = copy.deepcopy(self._cache)
        n = cache.get_seq_length()
        if n > len(prefix):
            cache.crop(-(n - len(prefix)))
        return cache
