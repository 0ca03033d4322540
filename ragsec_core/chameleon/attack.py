"""Semantic Chameleon sleeper/trigger attack: objectives and the two word-level coordinate optimisers.

A document is a list of word tokens (`words`); an optimiser substitutes words at unprotected positions,
modifying at most `max_modified` (15 %) of the word tokens, never touching the payload, and keeps a
substitution only if it lowers the loss and keeps the text's perplexity under the local LM below the cap
(100, or the base text's own perplexity if that is higher). Each iteration evaluates `n_candidates` (5)
exact losses in one batch; the run stops after `iterations` (100) or when the best loss improved by less
than `early_delta` (0.001) for `patience` (10) iterations.

* `optimise_gradient`: HotFlip/GCG. One forward/backward through MiniLM gives d loss / d input embedding;
  the first-order change (E[v] - E[current]) . grad ranks replacement words for every position; the 5
  candidates are random (position, top-16 word) picks, evaluated exactly.
* `optimise_blackbox`: the released code's search: one random position, 5 random corpus-vocabulary words.
* Joint sparse + dense (paper Phase 4c): the black-box search with loss -(alpha cos(d, q) + (1 - alpha)
  keyword_overlap(d, q)) and candidates biased to the query's keywords.

Objectives (paper eq. 1-2, L_cos(a, b) = 1 - cos): the trigger's eq. 2 is used as printed. Eq. 1 as printed
(`sleeper_form="literal"`) rewards the sleeper for being *far* from the target query and the trigger, which
contradicts its stated role ("semantic bridging ... proximity to the trigger") and makes co-retrieval
impossible by construction; the default `"bridge"` form keeps the weights and flips those two signs:
L_s = lambda L_cos(s, q_b) + beta L_cos(s, q_m) + gamma L_cos(s, t).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

from ragsec_core._util.text import STOPWORDS, tokenize
from ragsec_core.chameleon.fluency import Fluency
from ragsec_core.models.scoring import perplexity

if TYPE_CHECKING:
    from ragsec_core.models.llm import LLM
    from ragsec_core.retrieval.embed import Embedder

__all__ = ["perplexity"]  # re-exported: callers and tests import it from here

LAMBDA, BETA, GAMMA, EPSILON = 0.4, 0.3, 0.3, 0.1
MAX_MODIFIED = 0.15
PPL_CAP = 100.0
ITERATIONS, CANDIDATES = 100, 5
EARLY_DELTA, PATIENCE = 0.001, 10
TOPK_GRAD = 16

_WORD = re.compile(r"\w+(?:[-'@.]\w+)*|[^\w\s]")
_NO_SPACE_BEFORE = set(".,;:!?)]}%")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def detokenize(ws: Sequence[str]) -> str:
    out = ""
    for i, w in enumerate(ws):
        if i and w not in _NO_SPACE_BEFORE and not out.endswith(("(", "[")):
            out += " "
        out += w
    return out


def is_word(w: str) -> bool:
    return bool(re.match(r"\w", w))


# ---------------------------------------------------------------- objectives

class Objective:
    """A loss over normalised document embeddings (torch, so gradients flow); lower is better."""

    def loss(self, e: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:  # e: [n, d]
        raise NotImplementedError


@dataclass
class SleeperObjective(Objective):
    q_m: torch.Tensor  # [d] target (malicious) query
    q_b: torch.Tensor  # [b, d] benign queries
    t: torch.Tensor  # [d] trigger
    form: str = "bridge"
    lam: float = LAMBDA
    beta: float = BETA
    gamma: float = GAMMA

    def loss(self, e: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        lb = (1 - e @ self.q_b.T).mean(1)
        lm, lt = 1 - e @ self.q_m, 1 - e @ self.t
        if self.form == "literal":  # eq. 1 exactly as printed
            return self.lam * lb + self.beta * (1 - lm) + self.gamma * (1 - lt)
        return self.lam * lb + self.beta * lm + self.gamma * lt


@dataclass
class TriggerObjective(Objective):
    q_m: torch.Tensor
    s: torch.Tensor  # [d] sleeper
    corpus: torch.Tensor  # [n, d] existing corpus embeddings (diversity penalty D_max)
    lam: float = LAMBDA
    beta: float = BETA
    eps: float = EPSILON

    def loss(self, e: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        dmax = (e @ self.corpus.T).max(1).values if len(self.corpus) else torch.zeros(len(e))
        return self.lam * (1 - e @ self.q_m) + self.beta * (1 - e @ self.s) + self.eps * dmax


def keyword_overlap(text: str, keywords: Sequence[str]) -> float:
    """Fraction of the query's keywords present in the text (the released code's BM25 proxy)."""
    kw = {k.lower() for k in keywords}
    return len(kw & set(tokenize(text))) / len(kw) if kw else 0.0


@dataclass
class JointObjective(Objective):
    q_m: torch.Tensor
    keywords: tuple[str, ...]
    alpha: float

    def loss(self, e: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        sparse = torch.tensor([keyword_overlap(t, self.keywords) for t in texts], dtype=e.dtype)
        return -(self.alpha * (e @ self.q_m) + (1 - self.alpha) * sparse)


def query_keywords(query: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for t in tokenize(query) if len(t) > 2 and not t.isdigit()))


# ---------------------------------------------------------------- encoder helpers

class Encoder:
    """MiniLM (the retriever's own embedder) with word-aligned tokenisation and embedding gradients."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.model, self.tok = embedder.model, embedder.tokenizer
        self.matrix = self.model.get_input_embeddings().weight.detach()
        self._vocab: tuple[np.ndarray, list[str]] | None = None

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        return torch.from_numpy(self.embedder.embed(list(texts), batch_size=16))

    def grad(self, ws: Sequence[str], objective: Objective) -> tuple[torch.Tensor, list[int | None], float]:
        """d loss / d input embedding at the first word piece of every word; and the current loss."""
        enc = self.tok([list(ws)], is_split_into_words=True, truncation=True, max_length=256, return_tensors="pt")
        x = self.matrix[enc["input_ids"][0]].clone().unsqueeze(0).requires_grad_(True)
        out = self.model(inputs_embeds=x, attention_mask=enc["attention_mask"]).last_hidden_state
        e = self.embedder.pool(out, enc["attention_mask"])
        loss = objective.loss(e, [detokenize(ws)])[0]
        (gx,) = torch.autograd.grad(loss, x)  # input gradient only: no weight gradients are accumulated
        first: list[int | None] = [None] * len(ws)
        for p, w in enumerate(enc.word_ids(0)):
            if w is not None and first[w] is None:
                first[w] = p
        ids = enc["input_ids"][0]
        g = gx[0]
        rows = [(g[p], int(ids[p])) if p is not None else None for p in first]
        gmat = torch.stack([r[0] if r else torch.zeros_like(g[0]) for r in rows])
        return gmat, [r[1] if r else None for r in rows], float(loss.detach())

    def word_vocab(self) -> tuple[np.ndarray, list[str]]:
        """Whole-word, alphabetic, single-piece MiniLM tokens (HotFlip's candidate set)."""
        if self._vocab is None:
            items = [(i, t) for t, i in self.tok.get_vocab().items()
                     if t.isalpha() and t.isascii() and len(t) >= 3 and t not in STOPWORDS]
            items.sort()
            self._vocab = (np.array([i for i, _ in items]), [t for _, t in items])
        return self._vocab


# ---------------------------------------------------------------- optimisers

@dataclass
class OptimResult:
    text: str
    words: list[str]
    initial_words: list[str]
    initial_loss: float
    final_loss: float
    history: list[float]  # best loss after every iteration
    modified: list[int]  # positions that differ from the base
    n_words: int
    budget: int
    iterations: int
    stopped_early: bool
    ppl_initial: float | None = None
    ppl_final: float | None = None
    ppl_rejections: int = 0
    method: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def modified_fraction(self) -> float:
        return len(self.modified) / max(1, self.n_words)

    def summary(self) -> dict:
        return {
            "method": self.method, "initial_loss": self.initial_loss, "final_loss": self.final_loss,
            "iterations": self.iterations, "stopped_early": self.stopped_early,
            "modified": len(self.modified), "n_words": self.n_words, "budget": self.budget,
            "modified_fraction": round(self.modified_fraction, 4), "ppl_initial": self.ppl_initial,
            "ppl_final": self.ppl_final, "ppl_rejections": self.ppl_rejections, **self.extra,
        }


@dataclass
class _State:
    ws: list[str]
    base: list[str]
    allowed: list[int]
    budget: int

    def positions(self) -> list[int]:
        changed = [i for i in self.allowed if self.ws[i] != self.base[i]]
        return self.allowed if len(changed) < self.budget else changed


def _setup(text: str, protected: str | None, max_modified: float) -> _State:
    ws = words(text)
    prot: set[int] = set()
    if protected:
        pw = words(protected)
        for i in range(len(ws) - len(pw), -1, -1):
            if ws[i : i + len(pw)] == pw:
                prot = set(range(i, i + len(pw)))
                break
    allowed = [i for i, w in enumerate(ws) if is_word(w) and i not in prot]
    n_words = sum(is_word(w) for w in ws)
    return _State(list(ws), list(ws), allowed, math.floor(max_modified * n_words))


def _run(
    text: str,
    objective: Objective,
    encoder: Encoder,
    propose: Callable[[_State, np.random.Generator], list[tuple[int, str]]],
    *,
    method: str,
    protected: str | None,
    iterations: int,
    max_modified: float,
    llm: LLM | None = None,
    ppl_cap: float = PPL_CAP,
    seed: int = 0,
    on_step: Callable[[int], None] | None = None,
) -> OptimResult:
    rng = np.random.default_rng(seed)
    st = _setup(text, protected, max_modified)
    cur_text = detokenize(st.ws)
    with torch.no_grad():
        best = float(objective.loss(encoder.embed([cur_text]), [cur_text])[0])
    initial = best
    fluency = Fluency(llm) if llm is not None else None
    if fluency is not None:
        fluency.set_reference(cur_text)
    ppl0 = fluency(cur_text) if fluency is not None else None
    cap = max(ppl_cap, ppl0) if ppl0 is not None else None
    memo: dict[str, float] = {}  # exact loss of every candidate text scored so far (the objective is fixed)
    history, stall, rejections, it, early = [], 0, 0, 0, False
    for it in range(1, iterations + 1):
        cands = [c for c in propose(st, rng) if st.ws[c[0]] != c[1]]
        improved_by = 0.0
        if cands:
            texts = []
            for pos, w in cands:
                trial = list(st.ws)
                trial[pos] = w
                texts.append(detokenize(trial))
            new = [t for t in dict.fromkeys(texts) if t not in memo]
            if new:  # the candidates not seen before, encoded in one MiniLM batch
                with torch.no_grad():
                    memo.update(zip(new, objective.loss(encoder.embed(new), new).tolist()))
            losses = np.array([memo[t] for t in texts])
            # the cap is a constraint, so it is checked only for a candidate that would otherwise be kept
            for j in np.argsort(losses)[:2]:  # at most two fluency checks per iteration
                if losses[j] >= best:
                    break
                if fluency is not None and cap is not None and fluency(texts[j]) > cap:
                    rejections += 1
                    continue
                st.ws[cands[j][0]] = cands[j][1]
                improved_by, best = best - float(losses[j]), float(losses[j])
                if fluency is not None:
                    fluency.set_reference(texts[j])
                break
        history.append(best)
        stall = 0 if improved_by >= EARLY_DELTA else stall + 1
        if on_step:
            on_step(it)
        if stall >= PATIENCE:
            early = True
            break
    final_text = detokenize(st.ws)
    return OptimResult(
        text=final_text, words=st.ws, initial_words=st.base, initial_loss=initial, final_loss=best,
        history=history, modified=[i for i in range(len(st.ws)) if st.ws[i] != st.base[i]],
        n_words=sum(is_word(w) for w in st.base), budget=st.budget, iterations=it, stopped_early=early,
        ppl_initial=ppl0, ppl_final=fluency(final_text) if fluency is not None else None,
        ppl_rejections=rejections, method=method,
    )


def optimise_gradient(text: str, objective: Objective, encoder: Encoder, *, protected: str | None = None,
                      iterations: int = ITERATIONS, n_candidates: int = CANDIDATES,
                      max_modified: float = MAX_MODIFIED, llm: LLM | None = None, ppl_cap: float = PPL_CAP,
                      seed: int = 0, topk: int = TOPK_GRAD, on_step: Callable[[int], None] | None = None) -> OptimResult:
    vocab_ids, vocab_words = encoder.word_vocab()
    ev = encoder.matrix[torch.from_numpy(vocab_ids)]  # [V, d]

    ranked: dict[tuple[str, ...], tuple[list[int], np.ndarray]] = {}  # state -> (positions, top words)

    def propose(st: _State, rng: np.random.Generator) -> list[tuple[int, str]]:
        key = tuple(st.ws)
        if key not in ranked:  # the gradient depends only on the current words: reuse it while they stand
            ranked.clear()
            g, cur_ids, _ = encoder.grad(st.ws, objective)
            pos = [p for p in st.positions() if cur_ids[p] is not None]
            top = np.zeros((0, 0), dtype=np.int64)
            if pos:
                idx = torch.tensor(pos)
                cur = encoder.matrix[torch.tensor([cur_ids[p] for p in pos])]
                # first-order loss change of swapping word p for vocab v: (E_v - E_cur_p) . g_p
                delta = g[idx] @ ev.T - (g[idx] * cur).sum(1, keepdim=True)
                top = torch.topk(-delta, min(topk, ev.shape[0]), dim=1).indices.numpy()
            ranked[key] = (pos, top)
        pos, top = ranked[key]
        if not pos:
            return []
        picks = rng.integers(0, len(pos), n_candidates)
        return [(pos[r], vocab_words[top[r, rng.integers(0, top.shape[1])]]) for r in picks]

    return _run(text, objective, encoder, propose, method="gradient", protected=protected,
                iterations=iterations, max_modified=max_modified, llm=llm, ppl_cap=ppl_cap, seed=seed,
                on_step=on_step)


def optimise_blackbox(text: str, objective: Objective, encoder: Encoder, vocab: Sequence[str], *,
                      protected: str | None = None, iterations: int = ITERATIONS,
                      n_candidates: int = CANDIDATES, max_modified: float = MAX_MODIFIED,
                      llm: LLM | None = None, ppl_cap: float = PPL_CAP, seed: int = 0,
                      bias: Sequence[str] = (), n_bias: int = 2, on_step: Callable[[int], None] | None = None) -> OptimResult:
    vocab = list(vocab)
    bias = list(bias)

    def propose(st: _State, rng: np.random.Generator) -> list[tuple[int, str]]:
        pos = st.positions()
        if not pos:
            return []
        p = pos[rng.integers(0, len(pos))]
        nb = min(n_bias, len(bias)) if bias else 0
        picks = [bias[i] for i in rng.choice(len(bias), nb, replace=False)] if nb else []
        picks += [vocab[i] for i in rng.choice(len(vocab), n_candidates - nb, replace=False)]
        return [(p, w) for w in picks]

    return _run(text, objective, encoder, propose, method="joint" if bias else "blackbox",
                protected=protected, iterations=iterations, max_modified=max_modified, llm=llm,
                ppl_cap=ppl_cap, seed=seed, on_step=on_step)


def corpus_vocabulary(texts: Sequence[str], min_count: int = 2, limit: int = 5000) -> list[str]:
    """Alphabetic corpus words (no stop words), most frequent first, as the black-box search samples."""
    from collections import Counter

    c: Counter[str] = Counter(t for text in texts for t in tokenize(text) if t.isalpha() and len(t) > 2)
    return [w for w, n in c.most_common(limit) if n >= min_count]


# ---------------------------------------------------------------- keyword injection

KEYWORD_DENSITIES = (0.01, 0.03, 0.05, 0.10, 0.15)
KEYWORD_STRATEGIES = ("query_keywords", "tfidf_top", "attack_keywords", "random_corpus")


def inject_keywords(text: str, keywords: Sequence[str], density: float, seed: int = 0,
                    protected: str | None = None) -> str:
    """Insert ceil(density x word count) keywords (cycled) at random word boundaries before the payload."""
    ws = words(text)
    n = max(1, math.ceil(density * sum(is_word(w) for w in ws)))
    end = len(ws)
    if protected:
        pw = words(protected)
        for i in range(len(ws) - len(pw), -1, -1):
            if ws[i : i + len(pw)] == pw:
                end = i
                break
    rng = np.random.default_rng(seed)
    kws = [keywords[i % len(keywords)] for i in range(n)] if keywords else []
    for kw in kws:
        ws.insert(int(rng.integers(0, end + 1)), kw)
        end += 1
    return detokenize(ws)
