"""Text scoring under the local causal LM: per-token losses and perplexity of a text on its own.

One implementation for every caller that asks "how surprising is this text to the model": the PPL
baselines (which flag passages above a benign cutoff) and the Semantic Chameleon fluency filter (which
rejects substitutions above a cap). Sharing it keeps the two numbers comparable and lets `Fluency`'s
prefix-cached fast path be checked against one reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

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
