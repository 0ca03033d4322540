"""Fluency filter of the Semantic Chameleon optimisers: perplexity under the local causal LM
(`models.scoring.perplexity`, the same one the PPL baselines use).

The filter dominated an optimiser iteration (~0.46 s of ~1.25 s per SmolLM2 forward on one CPU thread),
and almost every text it scores is the current document with one word substituted. `Fluency` makes that
cheap without changing what is computed:

* memo: a text is scored once (the search re-proposes the same substitution while its state is unchanged);
* shared prefix: the token ids of a candidate equal the current text's up to the substituted word, so the
  LM runs only on the suffix, reusing the current text's key/value cache and logits for the prefix (causal
  attention: the prefix's states do not depend on what follows). The result equals the full forward pass up
  to float rounding (tested to 1e-4 relative), so accept/reject decisions against the cap are unchanged.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from ragsec_core.models.llm import with_cache
from ragsec_core.models.replay import common_prefix
from ragsec_core.models.scoring import perplexity_of


def _cache_of(out: Any) -> Any:
    return getattr(out, "cache", None) or getattr(out, "past_key_values", None)


@dataclass
class _Scored:
    ids: torch.Tensor  # [n] token ids
    nll: torch.Tensor  # [n - 1] NLL of tokens 1..n-1
    logits: torch.Tensor  # [n, V] next-token logits at every position
    cache: Any  # the LM's key/value cache of all n tokens


class Fluency:
    """Memoised perplexity that reuses the key/value cache of a reference text's shared token prefix."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.memo: dict[str, float] = {}
        self.calls = 0  # LM forward passes actually run (for profiling and tests)
        self._ref: tuple[str, _Scored] | None = None
        self._last: tuple[str, _Scored] | None = None

    def _ids(self, text: str) -> torch.Tensor:
        """The text's tokens exactly as `perplexity` reads them (no special tokens), so the two agree."""
        ids = self.llm.tokenizer(text, add_special_tokens=False)["input_ids"]
        return torch.tensor(ids, dtype=torch.long, device=self.llm.device)

    @torch.inference_mode()
    def _full(self, ids: torch.Tensor) -> _Scored:
        self.calls += 1
        out = self.llm.model(ids[None], use_cache=True)
        logits = out.logits[0].float()
        return _Scored(ids, F.cross_entropy(logits[:-1], ids[1:], reduction="none"), logits, _cache_of(out))

    @torch.inference_mode()
    def _extend(self, ref: _Scored, ids: torch.Tensor) -> _Scored:
        """Score `ids` reusing `ref`'s states for the longest common token prefix."""
        p = common_prefix(ref.ids, ids)  # first differing position
        if p < 1 or p == len(ids) or not getattr(ref.cache, "is_croppable", True):
            return self._full(ids)
        self.calls += 1
        cache = copy.deepcopy(ref.cache)
        if p < len(ref.ids):
            cache.crop(p - len(ref.ids))  # a negative count removes tokens (every transformers version)
        out = self.llm.model(ids[None, p:], use_cache=True, **with_cache(self.llm.model, cache))
        logits = torch.cat([ref.logits[:p], out.logits[0].float()])
        nll = torch.cat([ref.nll[: p - 1], F.cross_entropy(logits[p - 1 : -1], ids[p:], reduction="none")])
        return _Scored(ids, nll, logits, _cache_of(out))

    def set_reference(self, text: str) -> None:
        """The text candidates are derived from (the optimiser's current document)."""
        if self._ref is not None and self._ref[0] == text:
            return
        if self._last is not None and self._last[0] == text:
            self._ref = self._last
        else:
            self._ref = (text, self._full(self._ids(text)))
            self.memo[text] = perplexity_of(self._ref[1].nll)

    def __call__(self, text: str) -> float:
        if text in self.memo:
            return self.memo[text]
        ids = self._ids(text)
        scored = self._extend(self._ref[1], ids) if self._ref is not None else self._full(ids)
        self._last = (text, scored)
        self.memo[text] = perplexity_of(scored.nll)
        return self.memo[text]
