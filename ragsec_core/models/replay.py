"""Masked-prompt replay with prefix KV-cache reuse, shared by Pass-1, the baselines and the app.

Every masked variant of a Pass-0 prompt shares its tokens up to the first masked character with the
base prompt and, in later rounds, with earlier variants carrying the same earlier masks. The engine
keeps the KV caches of the last few prompts it ran (the first one is built lazily: no up-front base
forward) and runs only the tokens after the longest common token prefix with any of them. One forward
over `suffix + y` (y = the current event answer, teacher-forced, logits only for the answer positions)
yields both the log-probability of y — the continuous influence signal — and the greedy continuation
for as long as greedy would re-emit y; decoding resumes only where it diverges. The resulting answer is
exactly what greedy `generate` gives on the masked prompt (tested against `NaiveReplayEngine`, which
runs plain `generate` plus a full scoring forward for every variant, with no memo and no reuse).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from ragsec_core.models.llm import LLM, GenerationSettings, eos_ids, with_cache

MAX_CACHED_PROMPTS = 6  # ~28 MB of KV each for a 600-token SmolLM2 prompt
DRAFT_TOKENS = 8  # drafted tokens verified per forward after a divergence
MAX_DRAFT_SOURCES = 8  # earlier answers searched for drafts


@dataclass(frozen=True)
class Replay:
    answer: str
    logprob: float  # mean log-probability of the reference answer's tokens under this prompt
    ms: float
    reused_tokens: int  # prompt tokens served from a cached prefix
    prompt_tokens: int


@dataclass(eq=False)  # compared by identity: field equality would compare tensors
class _Cached:
    ids: torch.Tensor  # the prompt's token ids
    cache: Any  # its KV cache, exactly len(ids) positions
    used: int = field(default=0)  # LRU clock


class ReplayEngine:
    """Greedy replays of variants of one base prompt, with prefix reuse and a memo of identical prompts."""

    def __init__(
        self, llm: LLM, base_prompt: str, settings: GenerationSettings | None = None, max_cached: int = MAX_CACHED_PROMPTS
    ) -> None:
        self.llm = llm
        self.settings = settings or GenerationSettings()
        self.base_ids = llm.encode(base_prompt)[0]
        self.calls = 0  # replays that ran the model (memo hits excluded)
        self.forward_tokens = 0  # tokens pushed through the model, for forward-pass equivalents
        self.max_cached = max_cached
        self._memo: dict[tuple[str, str], Replay] = {}
        self._cached: list[_Cached] = []
        self._clock = 0
        self._answers: list[list[int]] = []  # token ids of earlier answers: draft sources

    def forward_pass_equivalents(self) -> float:
        """Tokens processed so far divided by the base prompt length."""
        return self.forward_tokens / max(1, len(self.base_ids))

    def replay(self, prompt: str, reference: str) -> Replay:
        """Greedy answer of `prompt` and the mean log-probability of `reference` under it."""
        key = (prompt, reference)
        if key not in self._memo:
            self._memo[key] = self._run(prompt, reference)
        return self._memo[key]

    def _run(self, prompt: str, reference: str) -> Replay:
        t0 = time.perf_counter()
        ids = self.llm.encode(prompt)[0]
        ref = _answer_ids(self.llm, reference, self.settings.max_new_tokens, ids.device)
        with self.llm._lock, torch.no_grad():
            cache, keep = self._longest_prefix(ids)
            feed = torch.cat([ids[keep:], ref])[None, :]
            out = self.llm.model(feed, use_cache=True, logits_to_keep=len(ref) + 1, **with_cache(self.llm.model, cache))
            self.forward_tokens += feed.shape[1]
            logits = out.logits[0]  # predictions for answer positions 0..len(ref)
            mean_lp = _mean_logprob(logits, ref)
            tokens = self._greedy(logits.argmax(-1), ref, cache, ids)
            _crop(cache, len(ids))
            self._remember(ids, cache)
        self.calls += 1
        text = self.llm.tokenizer.decode(tokens, skip_special_tokens=True).strip()
        return Replay(text, mean_lp, (time.perf_counter() - t0) * 1000, keep, len(ids))

    def _longest_prefix(self, ids: torch.Tensor) -> tuple[Any, int]:
        """A private copy of the cached KV sharing the most leading tokens with `ids`, cropped to them."""
        from transformers import DynamicCache

        best, keep = None, 0
        for c in self._cached:
            n = min(common_prefix(c.ids, ids), len(ids) - 1)  # always run >= 1 prompt token
            if n > keep:
                best, keep = c, n
        if best is None:
            return DynamicCache(config=self.llm.model.config), 0
        self._clock += 1
        best.used = self._clock
        cache = copy.deepcopy(best.cache)
        _crop(cache, keep)
        return cache, keep

    def _remember(self, ids: torch.Tensor, cache: Any) -> None:
        """Keep this prompt's cache for later variants; drop the least recently used beyond the limit."""
        if self.max_cached < 1:
            return
        self._clock += 1
        self._cached.append(_Cached(ids, cache, self._clock))
        if len(self._cached) > self.max_cached:
            self._cached.remove(min(self._cached, key=lambda c: c.used))

    def _greedy(self, argmax: torch.Tensor, ref: torch.Tensor, cache: Any, ids: torch.Tensor) -> list[int]:
        """Follow the teacher-forced argmax while it agrees with the reference, then decode normally."""
        eos = eos_ids(self.llm)
        limit = self.settings.max_new_tokens
        tokens: list[int] = []
        j = 0
        while j < len(ref) and len(tokens) < limit:
            t = int(argmax[j])
            if t in eos:
                return tokens
            tokens.append(t)
            if t != int(ref[j]):
                break
            j += 1
        else:
            if len(tokens) >= limit:
                return tokens
            t = int(argmax[j])  # the prediction after the whole reference
            if t in eos:
                return tokens
            tokens.append(t)
        # cache holds prompt + ref; keep prompt + the agreeing reference tokens only
        _crop(cache, len(ids) + len(tokens) - 1)
        sources = [*self._answers, ref.tolist(), ids.tolist()]
        tokens = self._decode(tokens, cache, len(ids), sources, eos, limit)
        self._answers = ([tokens] + self._answers)[:MAX_DRAFT_SOURCES]
        return tokens

    def _decode(
        self, tokens: list[int], cache: Any, prompt_len: int, sources: list[list[int]], eos: frozenset[int], limit: int
    ) -> list[int]:
        """Greedy decoding after the divergence, verifying drafted tokens in one forward where it can.

        On a CPU one forward of 1 + k tokens costs about two single-token steps, and answers copy their
        wording from the prompt or repeat an earlier replay's answer, so a draft found by n-gram lookup
        there (prompt-lookup decoding) saves steps. A drafted token is kept only where it equals the
        argmax, so the tokens are those of plain greedy decoding."""
        device = self.llm.device
        while len(tokens) < limit:
            draft = _draft([*sources, tokens[:-1]], tokens, min(DRAFT_TOKENS, limit - len(tokens) - 1))
            feed = torch.tensor([[tokens[-1], *draft]], device=device)
            out = self.llm.model(feed, use_cache=True, **with_cache(self.llm.model, cache))
            self.forward_tokens += feed.shape[1]
            argmax = out.logits[0].argmax(-1).tolist()
            stop = False
            for i, t in enumerate(argmax):
                if t in eos:
                    stop = True
                    break
                tokens.append(t)
                if i >= len(draft) or t != draft[i] or len(tokens) >= limit:
                    break
            if stop or len(tokens) >= limit:
                break
            _crop(cache, prompt_len + len(tokens) - 1)  # drop the rejected draft positions
        return tokens


def _draft(sources: list[list[int]], tokens: list[int], room: int) -> list[int]:
    """Up to `room` tokens that followed the latest occurrence of the answer's last n-gram (n = 3, 2, 1)
    in the first source holding it (earlier answers, the reference, the prompt, this answer); [] if none."""
    if room <= 0:
        return []
    for n in (3, 2, 1):
        if len(tokens) < n:
            continue
        gram = tokens[-n:]
        for src in sources:
            for i in range(len(src) - n - 1, -1, -1):
                if src[i : i + n] == gram:
                    return src[i + n : i + n + room]
    return []


class NaiveReplayEngine:
    """The reference path: for every variant, plain greedy `generate` on the full prompt plus one full
    teacher-forced forward for the log-probability; no memo, no prefix reuse. Same interface and counters
    as ReplayEngine, so Pass-1 can run either and the two results can be compared."""

    def __init__(self, llm: LLM, base_prompt: str, settings: GenerationSettings | None = None) -> None:
        self.llm = llm
        self.settings = settings or GenerationSettings()
        self.base_ids = llm.encode(base_prompt)[0]
        self.calls = 0
        self.forward_tokens = 0

    def forward_pass_equivalents(self) -> float:
        return self.forward_tokens / max(1, len(self.base_ids))

    def replay(self, prompt: str, reference: str) -> Replay:
        t0 = time.perf_counter()
        gen = self.llm.generate(prompt, self.settings)
        ids = self.llm.encode(prompt)[0]
        ref = _answer_ids(self.llm, reference, self.settings.max_new_tokens, ids.device)
        with self.llm._lock, torch.no_grad():
            logits = self.llm.model(torch.cat([ids, ref])[None, :], use_cache=False).logits[0, len(ids) - 1 :]
        self.forward_tokens += gen.prompt_tokens + gen.new_tokens + len(ids) + len(ref)
        self.calls += 1
        return Replay(gen.text, _mean_logprob(logits, ref), (time.perf_counter() - t0) * 1000, 0, len(ids))


def _mean_logprob(logits: torch.Tensor, ref: torch.Tensor) -> float:
    """Mean log-probability of `ref` given logits whose row j predicts ref[j]."""
    if not len(ref):
        return 0.0
    logp = torch.log_softmax(logits[: len(ref)].float(), dim=-1)
    return float(logp[torch.arange(len(ref)), ref].mean())


def _answer_ids(llm: LLM, answer: str, limit: int, device: torch.device) -> torch.Tensor:
    ids = llm.tokenizer(answer, add_special_tokens=False, return_tensors="pt")["input_ids"][0]
    return ids[:limit].to(device)


def common_prefix(a: torch.Tensor, b: torch.Tensor) -> int:
    """Length of the longest common prefix of two token-id vectors (what a KV cache can be reused for)."""
    n = min(len(a), len(b))
    diff = (a[:n] != b[:n]).nonzero()
    return int(diff[0]) if len(diff) else n


def _crop(cache: Any, keep: int) -> None:
    n = cache.get_seq_length()
    if n > keep:
        cache.crop(-(n - keep))
