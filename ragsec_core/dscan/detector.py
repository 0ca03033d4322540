"""D-SCAN (Document-level Signal Collapse Analysis): is this generation poisoned, and by which document?

The API takes any Pass-0 trace: it replays the greedy generation with attention capture (the trace's
prompt and settings; greedy decoding replays token for token), draws N-1 further samples from the same
prefill when asked, computes the features of `dscan.features`, and scores them with a logistic-regression
detector stored as plain JSON coefficients (`dscan_detector.json`), so scoring needs numpy only;
scikit-learn is needed only to train (`ragsec bench dscan`). If the replayed answer differs from the
stored one (another model or settings), the stored answer is teacher-forced instead, which gives the
same rows as its generation would have (see `models.attention`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core.dscan.features import (
    ALL_FEATURES,
    LayerStats,
    doc_weights,
    features,
    implicated,
    layer_bands,
    layer_stats,
)
from ragsec_core.models.attention import (
    DEFAULT_TEMPERATURE,
    AnswerAttention,
    PromptMap,
    answer_token_ids,
    generate_with_attention,
    map_prompt,
    teacher_forced_attention,
)

DETECTOR_FILE = Path(__file__).with_name("dscan_detector.json")
DETECTOR_FORMAT = 1


# ---------------------------------------------------------------- detector

@dataclass
class Detector:
    """Standardised features -> logistic regression, as plain numbers (no pickles: safe to load)."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    layers: list[int]
    band: str = "all"
    n_samples: int = 1
    temperature: float = DEFAULT_TEMPERATURE
    max_new_tokens: int = 16
    threshold: float = 0.5
    model: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    # Per feature, the 5th/50th/95th percentiles over the training set's clean generations: the app shows
    # a trace's feature beside this range, so a reader sees "how collapsed is normal" for this model.
    clean_range: dict[str, list[float]] = field(default_factory=dict)

    def decision(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef) + self.intercept

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """P(poisoned) for rows of a feature matrix ordered as `self.features`."""
        return 0.5 * (1.0 + np.tanh(0.5 * self.decision(np.atleast_2d(x))))  # the logistic, without overflow

    def probability(self, feats: dict[str, float]) -> float:
        missing = [f for f in self.features if f not in feats]
        if missing:
            raise RagsecError(f"detector needs features {missing}")
        return float(self.predict_proba(np.array([[feats[f] for f in self.features]]))[0])

    def to_dict(self) -> dict[str, Any]:
        return {"format": DETECTOR_FORMAT, **self.__dict__}

    def save(self, path: str | Path) -> None:
        write_text_atomic(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Detector:
        if d.get("format") != DETECTOR_FORMAT:
            raise RagsecError(f"detector format {d.get('format')} is not {DETECTOR_FORMAT}: retrain it")
        d = {k: v for k, v in d.items() if k != "format"}
        det = cls(**d)
        n = len(det.features)
        if not (len(det.mean) == len(det.scale) == len(det.coef) == n) or any(s <= 0 for s in det.scale):
            raise RagsecError("detector file is inconsistent (feature, mean, scale and coef lengths)")
        return det

    @classmethod
    def load(cls, path: str | Path | None = None) -> Detector:
        p = Path(path) if path else DETECTOR_FILE
        try:
            return cls.from_dict(json.loads(p.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise RagsecError(f"no D-SCAN detector at '{p}': train one with `ragsec bench dscan`") from None
        except (json.JSONDecodeError, TypeError) as exc:
            raise RagsecError(f"unreadable D-SCAN detector '{p}': {exc}") from None


def fit_detector(
    x: np.ndarray, y: np.ndarray, names: Sequence[str], layers: Sequence[int], band: str = "", c: float = 1.0, **meta: Any
) -> Detector:
    """StandardScaler + LogisticRegression (scikit-learn), exported as coefficients.

    Newton-Cholesky: with ~20 features it converges in a few exact steps, where L-BFGS takes dozens of
    iterations; band selection and nested CV fit thousands of these.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    lr = LogisticRegression(C=c, solver="newton-cholesky", max_iter=500).fit((x - scaler.mean_) / scale, y)
    clean = x[np.asarray(y) == 0]
    ranges = {n: np.percentile(clean[:, i], [5, 50, 95]).round(6).tolist() for i, n in enumerate(names)} if len(clean) else {}
    return Detector(
        features=list(names),
        mean=scaler.mean_.tolist(),
        scale=scale.tolist(),
        coef=lr.coef_[0].tolist(),
        intercept=float(lr.intercept_[0]),
        layers=list(layers),
        band=band,
        clean_range=ranges,
        **meta,
    )


def select_band(
    matrices: dict[str, np.ndarray],
    y: np.ndarray,
    groups: np.ndarray,
    cols: Sequence[int] | None = None,
    folds: int = 4,
) -> tuple[str, dict[str, float]]:
    """Pick the layer band whose features give the best grouped-CV AUC on the given (training) rows.

    `matrices` maps a band name (see `layer_bands`) to the feature matrix of these rows computed over
    that band (columns in ALL_FEATURES order); `cols` selects a feature subset. Ties go to "all".
    """
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    scores: dict[str, float] = {}
    for name, x_all in matrices.items():
        x = x_all if cols is None else x_all[:, list(cols)]
        oof = np.full(len(y), 0.5)
        for tr, te in GroupKFold(n_splits=min(folds, len(set(groups.tolist())))).split(x, y, groups):
            if len(set(y[tr].tolist())) == 2:
                oof[te] = fit_detector(x[tr], y[tr], [""] * x.shape[1], []).predict_proba(x[te])
        scores[name] = float(roc_auc_score(y, oof)) if len(set(y.tolist())) == 2 else 0.5
    best = max(scores, key=lambda k: (scores[k], k == "all"))
    return best, scores


def band_matrices(
    rows: Sequence[Sequence[LayerStats]], embeddings: Sequence[np.ndarray | None], n_layers: int | None = None
) -> dict[str, np.ndarray]:
    """Feature matrices (ALL_FEATURES columns) of every candidate layer band, computed once."""
    n_layers = n_layers or rows[0][0].doc_mass.shape[1]
    return {name: feature_matrix(rows, embeddings, layers) for name, layers in layer_bands(n_layers).items()}


def feature_matrix(
    rows: Sequence[Sequence[LayerStats]],
    embeddings: Sequence[np.ndarray | None],
    layers: Sequence[int],
    names: Sequence[str] = ALL_FEATURES,
) -> np.ndarray:
    """One row per prompt: features of its samples over the layer band, in `names` order."""
    out = np.zeros((len(rows), len(names)))
    for i, (samples, emb) in enumerate(zip(rows, embeddings)):
        f = features(samples, layers, emb)
        out[i] = [f[n] for n in names]
    return out


# ---------------------------------------------------------------- analysis of one prompt / trace

@dataclass
class DocumentScore:
    hit: int | None  # index into trace.hits (None for a bare prompt)
    chunk_id: str | None
    tokens: int  # L_k
    density: float  # Attn(D_k)
    weight: float  # w_k


@dataclass
class DscanResult:
    features: dict[str, float]
    probability: float | None  # None without a detector
    poisoned: bool | None
    implicated: int  # index into `documents`
    documents: list[DocumentScore]
    layers: list[int]
    answers: list[str]
    replayed: bool  # True: attention from a replay of the generation; False: teacher-forced stored answer
    samples: list[LayerStats] = field(repr=False, default_factory=list)
    attention: list[AnswerAttention] = field(repr=False, default_factory=list)  # raw rows (keep_rows=True)
    surrogate: str | None = None  # the local model that stood in for an endpoint's (None: the trace's own model)

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": self.features,
            "probability": self.probability,
            "poisoned": self.poisoned,
            "implicated": self.implicated,
            "implicated_chunk": self.documents[self.implicated].chunk_id if self.documents else None,
            "documents": [d.__dict__ for d in self.documents],
            "layers": self.layers,
            "answers": self.answers,
            "replayed": self.replayed,
            "surrogate": self.surrogate,
        }


def capture(
    llm: Any, prompt: str, spans: Sequence[tuple[int, int]], n_samples: int = 1, max_new_tokens: int = 16,
    temperature: float = DEFAULT_TEMPERATURE, seed: int = 0,
) -> tuple[PromptMap, list[AnswerAttention]]:
    """Token map and N answers with attention rows for a rendered prompt with document spans."""
    pmap = map_prompt(llm, prompt, spans)
    return pmap, generate_with_attention(llm, prompt, max_new_tokens, n_samples, temperature, seed)


def analyse_prompt(
    llm: Any, prompt: str, spans: Sequence[tuple[int, int]], *, detector: Detector | None = None,
    embedder: Any = None, n_samples: int | None = None, max_new_tokens: int | None = None,
    layers: Sequence[int] | None = None, seed: int = 0, expected_answer: str | None = None, keep_rows: bool = False,
    hits: Sequence[int] | None = None, chunk_ids: Sequence[str] | None = None, question: str = "",
) -> DscanResult:
    """D-SCAN on a rendered prompt; `expected_answer` is the stored greedy answer to replay, `question` the
    user's question (its echo inside the documents is held apart by the claim features)."""
    n = n_samples or (detector.n_samples if detector else 1)
    tokens = max_new_tokens or (detector.max_new_tokens if detector else 32)
    temperature = detector.temperature if detector else DEFAULT_TEMPERATURE
    pmap, answers = capture(llm, prompt, spans, n, tokens, temperature, seed)
    replayed = expected_answer is None or answers[0].text == expected_answer.strip()
    if not replayed:
        answers[0] = teacher_forced_attention(llm, prompt, answer_token_ids(llm, expected_answer or ""))
        answers[0].text = (expected_answer or "").strip()
    stats = [layer_stats(a, pmap, question) for a in answers]
    band = list(layers) if layers is not None else (detector.layers if detector else list(range(stats[0].doc_mass.shape[1])))
    emb = embedder.embed([a.text for a in answers]) if (embedder is not None and n > 1) else None
    feats = features(stats, band, emb)
    prob = detector.probability(feats) if detector else None
    top, w = implicated(stats, band)
    density = np.mean([doc_weights(s, band)[0] for s in stats], axis=0)
    docs = [
        DocumentScore(
            hits[k] if hits is not None else None, chunk_ids[k] if chunk_ids is not None else None,
            int(pmap.doc_lengths[k]), float(density[k]), float(w[k]),
        )
        for k in range(len(spans))
    ]
    return DscanResult(
        feats, prob, None if prob is None or detector is None else prob >= detector.threshold, top, docs, band,
        [a.text for a in answers], replayed, stats, answers if keep_rows else [],
    )


def analyse_trace(
    trace: Any, llm: Any, *, detector: Detector | None = None, embedder: Any = None,
    n_samples: int | None = None, layers: Sequence[int] | None = None, keep_rows: bool = False,
) -> DscanResult:
    """D-SCAN for a Pass-0 trace: features, P(poisoned) and the implicated used chunk."""
    if not trace.spans:
        raise RagsecError(f"trace {trace.trace_id} placed no documents in the prompt: nothing to analyse")
    settings = trace.model.get("settings", {}) if isinstance(trace.model, dict) else {}
    prompt, shift = surrogate_prompt(trace, llm)
    result = analyse_prompt(
        llm, prompt, [(s.start + shift, s.end + shift) for s in trace.spans], detector=detector, embedder=embedder,
        n_samples=n_samples, max_new_tokens=int(settings.get("max_new_tokens", 32)), layers=layers,
        seed=int(settings.get("seed", 0)), expected_answer=trace.answer, keep_rows=keep_rows,
        hits=[s.hit for s in trace.spans], chunk_ids=[s.chunk_id for s in trace.spans], question=trace.query,
    )
    if trace.model.get("backend", "local") != "local" or getattr(trace, "origin", None):
        result.surrogate = llm.model_id  # attention of a local stand-in, not of the model that answered
    return result


def surrogate_prompt(trace: Any, llm: Any) -> tuple[str, int]:
    """The prompt the local model reads for a trace, and how far the trace's offsets move in it.

    A local trace's prompt is already rendered. A chat endpoint's (or an imported chat's) `prompt` is one
    message's content: the local model sees it in its own chat template, after the logged system message,
    so the passages keep their characters and move by the template's prefix. Other turns of a multi-turn
    import are left out (the surrogate reads the turn that holds the passages)."""
    if getattr(trace, "prompt_message", None) is None:
        return trace.prompt, 0
    system = next((m["content"] for m in trace.messages if m.get("role") == "system"), trace.system)
    rendered = llm.render_chat(system, trace.prompt)
    at = rendered.find(trace.prompt)
    if at < 0:
        raise RagsecError("the local model's chat template altered the logged prompt; cannot place its passages")
    return rendered, at
