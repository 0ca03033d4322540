"""D-SCAN evaluation (paper §4): grouped cross-validation by question, ablations, layers, references.

Every detector score reported here is out-of-fold: questions are split into folds (GroupKFold), and for
each fold the layer band is chosen and the detector fitted on the other folds only (nested selection), so
no question contributes to both training and testing of any prediction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core.dscan.detector import (
    Detector,
    feature_matrix,
    fit_detector,
    select_band,
)
from ragsec_core.dscan.features import (
    ALL_FEATURES,
    GROUPS,
    LayerStats,
    features,
    implicated,
    layer_bands,
)

ATTENTION_FREE = set(GROUPS["confidence"]) | set(GROUPS["consistency"])


def auc(y: np.ndarray, s: np.ndarray) -> float | None:
    from sklearn.metrics import roc_auc_score

    y, s = np.asarray(y), np.asarray(s)
    return float(roc_auc_score(y, s)) if len(set(y.tolist())) == 2 else None


def f1(y: np.ndarray, p: np.ndarray, threshold: float = 0.5) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y, (np.asarray(p) >= threshold).astype(int), zero_division=0))


def nested_cv(
    matrices: dict[str, np.ndarray],
    y: np.ndarray,
    groups: np.ndarray,
    n_layers: int,
    names: Sequence[str] = ALL_FEATURES,
    folds: int = 5,
) -> dict[str, Any]:
    """Out-of-fold probabilities; per outer fold the band is chosen on the training folds only.

    `matrices` are the per-band feature matrices of all prompts (`dscan.detector.band_matrices`); `names` picks
    the feature subset (ablations). Feature sets without attention features use the "all" band.
    """
    from sklearn.model_selection import GroupKFold

    cols = [ALL_FEATURES.index(n) for n in names]
    bands_all = layer_bands(n_layers)
    oof = np.full(len(y), 0.5)
    bands: list[str] = []
    layers_of: list[list[int]] = [[] for _ in y]
    needs_band = any(n not in ATTENTION_FREE for n in names)
    for tr, te in GroupKFold(n_splits=min(folds, len(set(groups.tolist())))).split(y, y, groups):
        if needs_band:
            band, _ = select_band({k: m[tr] for k, m in matrices.items()}, y[tr], groups[tr], cols)
        else:
            band = "all"
        x = matrices[band][:, cols]
        oof[te] = fit_detector(x[tr], y[tr], names, bands_all[band]).predict_proba(x[te])
        bands.append(band)
        for i in te:
            layers_of[i] = bands_all[band]
    return {"auc": auc(y, oof), "f1": f1(y, oof), "bands": bands, "oof": oof, "layers_of": layers_of}


def first_samples(
    rows: Sequence[Sequence[LayerStats]], embeddings: Sequence[np.ndarray | None], n: int
) -> tuple[list[Sequence[LayerStats]], list[np.ndarray | None]]:
    """Every prompt's first `n` samples, as a run with N = n would see them (consistency needs n > 1)."""
    return [r[:n] for r in rows], [e[:n] if n > 1 and e is not None else None for e in embeddings]


def shipped_detector(
    rows: Sequence[Sequence[LayerStats]], embeddings: Sequence[np.ndarray | None], y: np.ndarray, n_samples: int,
    conds: Sequence[str] | None = None, pairs: dict[str, tuple[str, str]] | None = None, path: Path | None = None,
) -> dict[str, Any] | None:
    """The shipped detector, unchanged, on this run's prompts: what the app would report for them. Unlike
    the cross-validated numbers this is not out-of-fold where the run is the detector's own training data
    (its `info` names it); on other data or controls it is a transfer test, and the FPR at its threshold
    is the share of clean prompts the app would flag. With the rows' conditions and the evaluation
    `pairs` (clean condition, poisoned condition), it also reports each pair present (`by_control`)."""
    try:
        det = Detector.load(path)
    except RagsecError:  # no readable shipped detector: nothing to transfer
        return None
    if det.n_samples > n_samples:
        return None
    x = feature_matrix(*first_samples(rows, embeddings, det.n_samples), det.layers, det.features)
    p = det.predict_proba(x)
    out: dict[str, Any] = {**operating_point(y, p, det.threshold), "threshold": det.threshold,
                           "trained_on": det.info.get("trained_on"), "n_samples": det.n_samples}
    if conds is not None and pairs:
        out["by_control"] = pair_metrics(y, p, conds, pairs, det.threshold)
    return out


def operating_point(y: np.ndarray, p: np.ndarray, threshold: float) -> dict[str, Any]:
    """AUC, and TPR / FPR when every score >= `threshold` is flagged."""
    y, hit = np.asarray(y), np.asarray(p) >= threshold
    return {"auc": auc(y, p),
            "tpr": float(hit[y == 1].mean()) if (y == 1).any() else None,
            "fpr": float(hit[y == 0].mean()) if (y == 0).any() else None}


def pair_metrics(
    y: np.ndarray, p: np.ndarray, conds: Sequence[str], pairs: dict[str, tuple[str, str]], threshold: float = 0.5,
) -> dict[str, dict[str, Any]]:
    """Per evaluation pair whose two conditions are both present: AUC, F1 at 0.5, TPR / FPR at `threshold`."""
    conds_a = np.asarray(conds)
    out: dict[str, dict[str, Any]] = {}
    for name, (clean, poisoned) in pairs.items():
        sel = (conds_a == clean) | (conds_a == poisoned)
        if (conds_a == clean).any() and (conds_a == poisoned).any():
            out[name] = {**operating_point(y[sel], p[sel], threshold), "f1": f1(y[sel], p[sel]), "prompts": int(sel.sum())}
    return out


def tpr_at_fpr(y: np.ndarray, p: np.ndarray, max_fprs: Sequence[float] = (0.01, 0.05, 0.10, 0.20)) -> dict[str, float]:
    """The best operating points: TPR when the threshold flags at most each share of these clean scores."""
    y, p = np.asarray(y), np.asarray(p)
    return {f"{m:.2f}": float(np.mean(p[y == 1] >= fpr_threshold(p[y == 0], m))) for m in max_fprs}


def fpr_threshold(clean_scores: np.ndarray, max_fpr: float) -> float:
    """The lowest threshold that flags at most `max_fpr` of these clean scores (flag: score >= threshold)."""
    s = np.sort(np.asarray(clean_scores, dtype=np.float64))[::-1]
    allowed = int(np.floor(max_fpr * len(s) + 1e-9))
    if allowed >= len(s):
        return 0.0
    return float(np.nextafter(s[allowed], np.inf))


def success_failure(y: np.ndarray, oof: np.ndarray, success: np.ndarray) -> dict[str, Any]:
    """AUC on poisoned prompts whose attack changed the answer (or did not) against all clean prompts."""
    clean = y == 0
    out: dict[str, Any] = {}
    for name, sel in (("success", (y == 1) & success), ("failure", (y == 1) & ~success)):
        idx = clean | sel
        out[f"auc_{name}"] = auc(y[idx], oof[idx]) if sel.any() else None
        out[f"n_{name}"] = int(sel.sum())
    return out


def localisation(
    rows: Sequence[Sequence[LayerStats]], layers_of: Sequence[Sequence[int]], poison_idx: Sequence[Sequence[int]],
    y: np.ndarray, subset: np.ndarray | None = None,
) -> float | None:
    """Share of poisoned prompts whose highest-density document is a poisoned one."""
    hits = [
        implicated(rows[i], layers_of[i])[0] in poison_idx[i]
        for i in range(len(y))
        if y[i] == 1 and (subset is None or subset[i])
    ]
    return float(np.mean(hits)) if hits else None


def single_feature_auc(
    rows: Sequence[Sequence[LayerStats]], embeddings: Sequence[np.ndarray | None], y: np.ndarray, layers: Sequence[int]
) -> dict[str, float | None]:
    """AUC of each raw feature (poisoned = positive; < 0.5 means the feature drops under attack)."""
    x = feature_matrix(rows, embeddings, layers, ALL_FEATURES)
    return {n: auc(y, x[:, j]) for j, n in enumerate(ALL_FEATURES)}


def per_layer_auc(rows: Sequence[Sequence[LayerStats]], y: np.ndarray, names: Sequence[str] = ("doc_entropy", "doc_w_max", "tok_entropy")) -> dict[str, list[float | None]]:
    """Which layers carry the signal: AUC of single-layer features, layer by layer (descriptive)."""
    n_layers = rows[0][0].doc_mass.shape[1]
    out: dict[str, list[float | None]] = {n: [] for n in names}
    for layer in range(n_layers):
        feats = [features(r, [layer]) for r in rows]
        for n in names:
            out[n].append(auc(y, np.array([f[n] for f in feats])))
    return out


def per_layer_localisation(rows: Sequence[Sequence[LayerStats]], poison_idx: Sequence[Sequence[int]], y: np.ndarray) -> list[float | None]:
    n_layers = rows[0][0].doc_mass.shape[1]
    return [localisation(rows, [[layer]] * len(rows), poison_idx, y) for layer in range(n_layers)]


# ---------------------------------------------------------------- 7B reference (shared attention data)

def reference_7b(attention_dir: Path, dataset: str) -> dict[str, Any]:
    """Document-level features of the labelled 7B per-passage attention (no model run needed).

    For each model, `noattack` records are clean (0) and `Poison` records poisoned (1), paired by id;
    passage_scores are treated as the document weights w_k.
    """
    out: dict[str, Any] = {}
    for model in ("llama7b", "mistral7b"):
        files = {c: attention_dir / f"{model}_{c}_{dataset}_seed_12.json" for c in ("noattack", "Poison")}
        if not all(f.exists() for f in files.values()):
            continue
        xs, ys, loc = [], [], []
        for label, cond in ((0, "noattack"), (1, "Poison")):
            recs = json.loads(files[cond].read_text(encoding="utf-8"))[0]["iter_0"]
            for r in recs:
                w = np.asarray(r["passage_scores"], dtype=np.float64)
                if w.sum() <= 0:
                    continue
                w = w / w.sum()
                ent = float(-(w * np.log(np.maximum(w, 1e-12))).sum() / np.log(len(w)))
                xs.append([ent, float(w.max()), float(w.std())])
                ys.append(label)
                if label:
                    loc.append(int(np.argmax(w)) in set(r["corrupt_indices"]))
        x, yy = np.array(xs), np.array(ys)
        entry = {
            "n": len(yy),
            "auc_doc_entropy": auc(yy, -x[:, 0]),  # oriented: lower entropy = poisoned
            "auc_max_share": auc(yy, x[:, 1]),
            "auc_w_std": auc(yy, x[:, 2]),
            "localisation_acc": float(np.mean(loc)) if loc else None,
        }
        entry["auc_lr_cv"] = _lr_cv_auc(x, yy)
        out[model] = entry
    return out


def _lr_cv_auc(x: np.ndarray, y: np.ndarray, folds: int = 5) -> float | None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    oof = np.zeros(len(y))
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=0).split(x, y):
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(x[tr], y[tr])
        oof[te] = model.predict_proba(x[te])[:, 1]
    return auc(y, oof)
