"""D-SCAN features (paper §3) from captured answer-token attention.

Two stages, so that the layer band can be chosen on training data without re-running the model:

1. `layer_stats(answer, pmap)` reduces one answer's rows (T x L x H x P) to small per-token, per-layer
   arrays (head-averaged document masses and token-level statistics of the attention over context
   tokens). This is what a benchmark stores.
2. `sample_features(stats, layers)` / `features(list of stats, layers, answers)` aggregate those over a
   layer band, the answer tokens and the N samples into the named feature vector.

Definitions (T answer tokens, K documents, document D_k with L_k tokens, alpha_{t,j} the head- and
band-averaged attention of answer row t to prompt token j):

* density Attn(D_k) = (1/L_k) sum_t sum_{j in D_k} alpha_{t,j}   (paper eq. 2, summed over t)
* w_k = Attn(D_k) / sum_i Attn(D_i); H_doc = -sum_k w_k log w_k / log K   (eq. 3, divided by log K so
  that it lies in [0, 1] whatever K is)
* per answer token, the same entropy of that token's density: its mean, std and max over tokens
* token level: entropy of the attention over context tokens (renormalised, / log n), its spread
  (n * variance = sum p^2 - 1/n), sparsity (fraction of context tokens holding 90 % of the mass), the
  largest single-token share, and the share of the whole row that reaches the documents at all
* confidence (eq. 1): P_mean and std of the answer tokens' probabilities
* sampling consistency over N answers: mean pairwise cosine of MiniLM embeddings, and the entropy of
  the distribution of distinct normalised answers (divergence), / log N
* claim (ours, for question-restating clean text; regions from `dscan.regions`): how the document
  attention splits between the question's echo and the rest, how much of it lands on the answer's own
  words, and whether the documents that state the answer draw more claim attention than the others
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragsec_core.data.trace import normalize
from ragsec_core.dscan.regions import answer_words, question_words, region_mass, sentence_mask, token_mask
from ragsec_core.models.attention import AnswerAttention, PromptMap

EPS = 1e-12

DOC_FEATURES = (
    "doc_entropy",
    "doc_w_max",
    "doc_w_std",
    "doc_entropy_tok_mean",
    "doc_entropy_tok_std",
    "doc_entropy_tok_max",
    "doc_entropy_sample_std",
)
TOKEN_FEATURES = ("tok_entropy", "tok_entropy_std", "tok_spread", "tok_sparsity", "tok_max", "ctx_mass")
CONFIDENCE_FEATURES = ("p_mean", "p_std")
CONSISTENCY_FEATURES = ("sample_cosine", "answer_divergence")
CLAIM_FEATURES = (
    "echo_share",  # share of the document attention on question-echo tokens
    "echo_density_ratio",  # log per-token density of echo tokens over the other document tokens
    "claim_entropy",  # H_doc of the densities over non-echo tokens only (collapse onto a claim)
    "claim_w_max",
    "answer_src_share",  # share of the document attention on the answer's own words
    "answer_src_density_ratio",
    "answer_doc_share",  # sum of w_k over the documents that contain an answer word
    "answer_doc_frac",  # how many documents contain an answer word (text only), / K
    "answer_doc_contrast",  # log claim density of answer-stating documents over the others
    "claim_sent_share",  # share of the document attention on the sentences that contain an answer word
    "claim_sent_density_ratio",
)
PAPER_FEATURES = DOC_FEATURES + TOKEN_FEATURES + CONFIDENCE_FEATURES + CONSISTENCY_FEATURES
ALL_FEATURES = PAPER_FEATURES + CLAIM_FEATURES
GROUPS = {
    "doc": DOC_FEATURES,
    "token": TOKEN_FEATURES,
    "confidence": CONFIDENCE_FEATURES,
    "consistency": CONSISTENCY_FEATURES,
    "claim": CLAIM_FEATURES,
}


@dataclass
class LayerStats:
    """Per answer token t and layer l (head-averaged): everything the features need, nothing more."""

    doc_mass: np.ndarray  # (T, L, K) attention mass on each document's tokens
    doc_lengths: np.ndarray  # (K,) L_k
    tok_entropy: np.ndarray  # (T, L) normalised entropy over context tokens
    tok_spread: np.ndarray  # (T, L) n * variance of the context distribution
    tok_sparsity: np.ndarray  # (T, L) fraction of context tokens holding 90 % of the mass
    tok_max: np.ndarray  # (T, L) largest single context-token share
    token_probs: np.ndarray  # (T,)
    text: str
    echo_mass: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (T, L, K) on question-echo tokens
    echo_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # (K,)
    answer_mass: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (T, L, K) on answer-word tokens
    answer_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # (K,)
    claim_mass: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (T, L, K) on sentences with an answer word
    claim_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # (K,)

    def __post_init__(self) -> None:
        """Rows cached before the claim regions existed carry none: empty regions (claim features 0)."""
        k = len(self.doc_lengths)
        for mass, lengths in (("echo_mass", "echo_lengths"), ("answer_mass", "answer_lengths"),
                              ("claim_mass", "claim_lengths")):
            if getattr(self, mass).shape != self.doc_mass.shape:
                setattr(self, mass, np.zeros_like(self.doc_mass))
            if len(getattr(self, lengths)) != k:
                setattr(self, lengths, np.zeros(k, dtype=np.int64))

    @property
    def n_tokens(self) -> int:
        return int(self.doc_mass.shape[0])

    def to_dict(self) -> dict[str, object]:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> LayerStats:
        arr = {k: np.asarray(v, dtype=np.int64 if k.endswith("_lengths") else np.float64)
               for k, v in d.items() if k != "text" and v is not None}
        n_layers = arr["tok_entropy"].shape[1] if arr["tok_entropy"].ndim == 2 else 0
        for name in ("doc_mass", "echo_mass", "answer_mass", "claim_mass"):
            if name in arr and arr[name].size == 0:  # empty answer: keep the shapes
                arr[name] = arr[name].reshape(0, n_layers, len(arr["doc_lengths"]))
        return cls(text=str(d["text"]), **arr)


def layer_stats(answer: AnswerAttention, pmap: PromptMap, question: str = "") -> LayerStats:
    """Reduce the captured rows of one answer; the only step that touches the (T, L, H, P) tensor.
    `question` marks the echo regions; without it they are empty (and the claim features read 0)."""
    rows = answer.rows.mean(axis=2)  # (T, L, P), head average
    k = len(pmap.doc_tokens)
    t, n_layers = rows.shape[0], rows.shape[1]
    doc_mass = np.zeros((t, n_layers, k), dtype=np.float64)
    for i, idx in enumerate(pmap.doc_tokens):
        if len(idx):
            doc_mass[:, :, i] = rows[:, :, idx].sum(-1)
    ctx_idx = np.concatenate([i for i in pmap.doc_tokens if len(i)] or [np.zeros(0, dtype=np.int64)])
    ctx = rows[:, :, ctx_idx].astype(np.float64)
    n = ctx.shape[-1]
    total = ctx.sum(-1, keepdims=True)
    p = ctx / np.maximum(total, EPS)
    ent = -(p * np.log(np.maximum(p, EPS))).sum(-1) / np.log(n) if n > 1 else np.zeros((t, n_layers))
    spread = (p**2).sum(-1) - 1.0 / max(n, 1)
    if n:
        srt = -np.sort(-p, axis=-1)
        need = (np.cumsum(srt, axis=-1) < 0.9).sum(-1) + 1
        sparsity = np.minimum(need, n) / n
        tmax = srt[..., 0]
    else:
        sparsity = tmax = np.zeros((t, n_layers))
    echo, echo_len = region_mass(rows, pmap, token_mask(pmap, question_words(question)))
    words = answer_words(answer.text, question)
    ans, ans_len = region_mass(rows, pmap, token_mask(pmap, words))
    claim, claim_len = region_mass(rows, pmap, sentence_mask(pmap, words))
    return LayerStats(doc_mass, pmap.doc_lengths.copy(), ent, spread, sparsity, tmax, answer.token_probs.copy(),
                      answer.text, echo, echo_len, ans, ans_len, claim, claim_len)


# ---------------------------------------------------------------- aggregation

def doc_weights(stats: LayerStats, layers: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Density Attn(D_k) (paper eq. 2, band-averaged) and normalised weights w_k."""
    dm = stats.doc_mass[:, list(layers), :].mean(axis=1) if stats.n_tokens else np.zeros((0, len(stats.doc_lengths)))
    lengths = np.maximum(stats.doc_lengths, 1)
    density = np.where(stats.doc_lengths > 0, dm.sum(0) / lengths, 0.0)
    return density, _normalise(density)


def _normalise(x: np.ndarray) -> np.ndarray:
    s = x.sum(-1, keepdims=True)
    k = x.shape[-1]
    return np.where(s > EPS, x / np.maximum(s, EPS), 1.0 / max(k, 1))


def entropy_norm(w: np.ndarray) -> np.ndarray:
    """Entropy of distributions along the last axis divided by log K: 0 = one document, 1 = uniform."""
    k = w.shape[-1]
    if k < 2:
        return np.zeros(w.shape[:-1])
    return -(w * np.log(np.maximum(w, EPS))).sum(-1) / np.log(k)


def sample_features(stats: LayerStats, layers: Sequence[int]) -> dict[str, float]:
    """Features of one answer over a layer band (no cross-sample features)."""
    layers = list(layers)
    _density, w = doc_weights(stats, layers)
    f: dict[str, float] = {
        "doc_entropy": float(entropy_norm(w)),
        "doc_w_max": float(w.max()) if w.size else 0.0,
        "doc_w_std": float(w.std()) if w.size else 0.0,
    }
    if stats.n_tokens:
        lengths = np.maximum(stats.doc_lengths, 1)
        per_tok = stats.doc_mass[:, layers, :].mean(1) / lengths
        h_tok = entropy_norm(_normalise(per_tok))
        tok_ent = stats.tok_entropy[:, layers].mean(1)
        ctx_mass = stats.doc_mass[:, layers, :].sum(-1).mean(1)
        f.update(
            doc_entropy_tok_mean=float(h_tok.mean()),
            doc_entropy_tok_std=float(h_tok.std()),
            doc_entropy_tok_max=float(h_tok.max()),
            tok_entropy=float(tok_ent.mean()),
            tok_entropy_std=float(tok_ent.std()),
            tok_spread=float(stats.tok_spread[:, layers].mean()),
            tok_sparsity=float(stats.tok_sparsity[:, layers].mean()),
            tok_max=float(stats.tok_max[:, layers].mean()),
            ctx_mass=float(ctx_mass.mean()),
            p_mean=float(stats.token_probs.mean()),
            p_std=float(stats.token_probs.std()),
        )
    else:  # an empty answer (immediate EOS): no answer rows, neutral values
        f.update({name: 0.0 for name in TOKEN_FEATURES + CONFIDENCE_FEATURES})
        f.update(doc_entropy_tok_mean=f["doc_entropy"], doc_entropy_tok_std=0.0, doc_entropy_tok_max=f["doc_entropy"])
    f.update(claim_features(stats, layers, w))
    return f


def _log_ratio(mass_a: float, len_a: float, mass_b: float, len_b: float) -> float:
    """log of per-token density a over density b; 0 when either region is empty (no evidence either way)."""
    if len_a <= 0 or len_b <= 0:
        return 0.0
    return float(np.log((mass_a / len_a + EPS) / (mass_b / len_b + EPS)))


def claim_features(stats: LayerStats, layers: Sequence[int], w: np.ndarray) -> dict[str, float]:
    """The claim group: echo vs claim vs answer-word attention over the band (`w` = the document weights).

    A poison that restates the question and one that does not both state the attacker's answer, and the
    answer copies it; a benign passage that restates the question only echoes. So the contrast that
    should survive the question-matched control is between the answer's words and the rest of the text,
    and between the documents that state the answer and the others, with the echo held apart."""
    d = stats.doc_mass[:, layers, :].mean(1).sum(0) if stats.n_tokens else np.zeros(len(stats.doc_lengths))
    e = stats.echo_mass[:, layers, :].mean(1).sum(0) if stats.n_tokens else np.zeros_like(d)
    a = stats.answer_mass[:, layers, :].mean(1).sum(0) if stats.n_tokens else np.zeros_like(d)
    c = stats.claim_mass[:, layers, :].mean(1).sum(0) if stats.n_tokens else np.zeros_like(d)
    n, ne, na = stats.doc_lengths.astype(float), stats.echo_lengths.astype(float), stats.answer_lengths.astype(float)
    nc = stats.claim_lengths.astype(float)
    total = float(d.sum())
    claim_density = np.where(n - ne > 0, (d - e) / np.maximum(n - ne, 1), 0.0)
    wc = _normalise(claim_density)
    states = na > 0
    contrast = (_log_ratio(float((d - e)[states].sum()), float((n - ne)[states].sum()),
                           float((d - e)[~states].sum()), float((n - ne)[~states].sum())) if states.any() else 0.0)
    return {
        "echo_share": float(e.sum() / total) if total > EPS else 0.0,
        "echo_density_ratio": _log_ratio(float(e.sum()), float(ne.sum()), float(total - e.sum()), float((n - ne).sum())),
        "claim_entropy": float(entropy_norm(wc)),
        "claim_w_max": float(wc.max()) if wc.size else 0.0,
        "answer_src_share": float(a.sum() / total) if total > EPS else 0.0,
        "answer_src_density_ratio": _log_ratio(float(a.sum()), float(na.sum()), float(total - a.sum()), float((n - na).sum())),
        "answer_doc_share": float(w[states].sum()) if w.size else 0.0,
        "answer_doc_frac": float(states.mean()) if states.size else 0.0,
        "answer_doc_contrast": contrast,
        "claim_sent_share": float(c.sum() / total) if total > EPS else 0.0,
        "claim_sent_density_ratio": _log_ratio(float(c.sum()), float(nc.sum()), float(total - c.sum()), float((n - nc).sum())),
    }


def features(
    samples: Sequence[LayerStats],
    layers: Sequence[int],
    embeddings: np.ndarray | None = None,
) -> dict[str, float]:
    """The D-SCAN feature vector of one prompt from its N sampled answers (sample 0 = greedy).

    Attention and confidence features are averaged over the samples; `doc_entropy_sample_std` is the
    spread of H_doc across samples; consistency needs the answers' normalised MiniLM `embeddings`
    (N x d) and is 1 / 0 (perfectly consistent) for a single sample.
    """
    if not samples:
        raise ValueError("features need at least one sample")
    per = [sample_features(s, layers) for s in samples]
    out = {name: float(np.mean([p[name] for p in per])) for name in per[0]}
    out["doc_entropy_sample_std"] = float(np.std([p["doc_entropy"] for p in per]))
    out["sample_cosine"] = sample_cosine(embeddings) if embeddings is not None and len(samples) > 1 else 1.0
    out["answer_divergence"] = answer_divergence([s.text for s in samples])
    return {name: out[name] for name in ALL_FEATURES}


def implicated(samples: Sequence[LayerStats], layers: Sequence[int]) -> tuple[int, np.ndarray]:
    """Index of the document that drew the attention (argmax of the sample-averaged w_k) and w."""
    w = np.mean([doc_weights(s, layers)[1] for s in samples], axis=0)
    return int(np.argmax(w)), w


def sample_cosine(embeddings: np.ndarray) -> float:
    """Mean pairwise cosine of normalised answer embeddings (paper §3.1 sequence cosine similarity)."""
    e = np.asarray(embeddings, dtype=np.float64)
    n = len(e)
    if n < 2:
        return 1.0
    sims = e @ e.T
    return float((sims.sum() - np.trace(sims)) / (n * (n - 1)))


def answer_divergence(texts: Sequence[str]) -> float:
    """Entropy of the distinct normalised answers / log N: 0 when all samples agree, 1 when all differ."""
    n = len(texts)
    if n < 2:
        return 0.0
    _, counts = np.unique([normalize(t) for t in texts], return_counts=True)
    p = counts / n
    return float(-(p * np.log(p)).sum() / np.log(n))


def layer_bands(n_layers: int) -> dict[str, list[int]]:
    """Candidate layer aggregations: all, last-k, halves and sliding bands of six layers."""
    bands = {"all": list(range(n_layers))}
    for k in (4, 8):
        if k < n_layers:
            bands[f"last{k}"] = list(range(n_layers - k, n_layers))
    half = n_layers // 2
    bands["first_half"], bands["second_half"] = list(range(half)), list(range(half, n_layers))
    width, stride = 6, 3
    for a in range(0, max(n_layers - width, 0) + 1, stride):
        bands[f"L{a}-{a + width - 1}"] = list(range(a, a + width))
    return bands
