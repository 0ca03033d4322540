"""`ragsec bench dscan --train-controls`: train and select on every control at once, report every pair.

Why: a detector trained on plain pairs learns whatever separates them most cheaply, and for black-box
PoisonedRAG poisons that is "a passage begins with the question" (question-matched AUC fell to ~0.69).
Training on all five prompt kinds of a question (clean, length-matched, question-matched clean; the
poison with and without the question in front) removes that shortcut from the training signal: the
question echo and the length occur on both sides. Folds are grouped by question, so every prompt of a
question is out-of-fold together, and every figure is out-of-fold (nested band selection as before).

The operating point is chosen where an analyst feels it: on the out-of-fold scores of the
question-matched clean prompts (FAQ-style text), at FPR <= `MAX_FPR`. The detector trained on all
prompts carries that threshold and its own out-of-fold figures per pair (`info.evaluation`), which the
app and the docs read instead of literal numbers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core.bench.dscan_pairs import CONTROL_PAIRS, POISONED
from ragsec_core.dscan import evaluate as ev
from ragsec_core.dscan.detector import Detector, band_matrices, fit_detector, select_band
from ragsec_core.dscan.features import (
    ALL_FEATURES,
    CLAIM_FEATURES,
    GROUPS,
    PAPER_FEATURES,
    LayerStats,
    layer_bands,
)
from ragsec_core.models.llm import DEFAULT_MODEL_ID

MAX_FPR = 0.10  # on question-matched clean prompts, where the old detector flagged 68-72 %
THRESHOLD_RULE = f"lowest threshold flagging <= {MAX_FPR:.0%} of the out-of-fold question-matched clean prompts"
# The ablation table: which feature groups carry the separation on each pair.
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "all": ALL_FEATURES,
    "paper (no claim)": PAPER_FEATURES,
    "claim only": CLAIM_FEATURES,
    "claim + output": CLAIM_FEATURES + GROUPS["confidence"] + GROUPS["consistency"],
    "no doc": tuple(f for f in ALL_FEATURES if f not in GROUPS["doc"]),
    "no token": tuple(f for f in ALL_FEATURES if f not in GROUPS["token"]),
    "output only": GROUPS["confidence"] + GROUPS["consistency"],
}
PER_LAYER = ("doc_entropy", "claim_entropy", "echo_share", "answer_src_share", "answer_doc_contrast")


def headline_pair(args: argparse.Namespace) -> str:
    """The pair behind the top-level `auc`: the control the run names, else the plain pair."""
    if getattr(args, "question_matched", False):
        return "question_matched"
    return "length_matched" if getattr(args, "length_matched", False) else "plain"


def cond_of(row: dict[str, Any]) -> str:
    return str(row.get("cond") or row["key"].rsplit(":", 1)[1])


def parse_stats(raw: list[dict[str, Any]]) -> tuple[list[list[LayerStats]], list[np.ndarray]]:
    """Every prompt's per-sample statistics and answer embeddings from its cache row, parsed once per run
    (the analysis and the shipped-detector evaluation both read them)."""
    return [[LayerStats.from_dict(s) for s in r["stats"]] for r in raw], [np.asarray(r["embeddings"]) for r in raw]


def analyse_controls(
    raw: list[dict[str, Any]], rows_all: list[list[LayerStats]], emb_all: list[np.ndarray],
    args: argparse.Namespace, data: Path, command: str,
) -> dict[str, Any]:
    """Out-of-fold evaluation of a detector trained on every condition; the results JSON's body.
    `rows_all` / `emb_all` are `parse_stats(raw)`."""
    y = np.array([int(cond_of(r) in POISONED) for r in raw])
    groups = np.array([r["id"] for r in raw])
    conds = [cond_of(r) for r in raw]
    n_max, n_layers = args.n_samples, rows_all[0][0].doc_mass.shape[1]
    rows, emb = ev.first_samples(rows_all, emb_all, n_max)
    mats = band_matrices(rows, emb, n_layers)
    main = ev.nested_cv(mats, y, groups, n_layers)
    qm_clean = np.asarray(conds) == CONTROL_PAIRS["question_matched"][0]
    threshold = ev.fpr_threshold(main["oof"][qm_clean], MAX_FPR) if qm_clean.any() else 0.5
    by_control = ev.pair_metrics(y, main["oof"], conds, CONTROL_PAIRS, threshold)
    head = headline_pair(args)
    if head not in by_control:
        raise RagsecError(f"this run has no '{head}' pair to report")
    by_n = {}
    for n in sorted({n for n in (1, 3, 5, 7, 10) if n <= n_max} | {n_max}):
        res = main if n == n_max else ev.nested_cv(band_matrices(*ev.first_samples(rows_all, emb_all, n), n_layers), y, groups, n_layers)
        by_n[str(n)] = {k: v["auc"] for k, v in ev.pair_metrics(y, res["oof"], conds, CONTROL_PAIRS).items()}
    ablations = {}
    for name, names in FEATURE_SETS.items():
        res = main if names == ALL_FEATURES else ev.nested_cv(mats, y, groups, n_layers, names)
        ablations[name] = {k: v["auc"] for k, v in ev.pair_metrics(y, res["oof"], conds, CONTROL_PAIRS).items()}
    band, band_scores = select_band(mats, y, groups)
    layers = layer_bands(n_layers)[band]
    detector = fit_detector(mats[band], y, ALL_FEATURES, layers, band, n_samples=n_max, threshold=threshold,
                            temperature=args.temperature, max_new_tokens=args.max_new_tokens, model=DEFAULT_MODEL_ID)
    detector.info = {"trained_on": data.name, "pairs": len(set(groups.tolist())), "prompts": len(y), "seed": args.seed,
                     "conditions": sorted(set(conds)), "threshold_rule": THRESHOLD_RULE, "command": command,
                     "evaluation": {"data": data.stem, "kind": "out-of-fold", "by_control": by_control}}
    if args.save_detector:
        detector.save(args.save_detector)
    qm = _subset(conds, CONTROL_PAIRS["question_matched"])
    pairs = {k: _subset(conds, v) for k, v in CONTROL_PAIRS.items() if k in by_control}
    return {
        "auc": by_control[head]["auc"], "f1": by_control[head]["f1"], "headline_pair": head,
        "by_control": by_control, "threshold": threshold, "threshold_rule": THRESHOLD_RULE,
        # TPR at the best threshold for each FPR bound, per pair (out-of-fold; thresholds set per pair)
        "tpr_at_fpr": {k: ev.tpr_at_fpr(y[idx], main["oof"][idx]) for k, idx in pairs.items()},
        "by_n": by_n, "ablations": ablations,
        "selected_band": {"band": band, "layers": layers, "cv_auc_by_band": band_scores},
        "fold_bands": main["bands"],
        "single_feature_auc_question_matched": _single_feature(rows, emb, y, layers, qm),
        "per_layer_auc_question_matched": ev.per_layer_auc([rows[i] for i in qm], y[qm], PER_LAYER) if qm.size else {},
        "localisation_acc": ev.localisation(rows, main["layers_of"], [r["poison_idx"] for r in raw], y),
        "attack_success_rate": {c: _rate(raw, c, "attack_success") for c in sorted(POISONED)},
        "clean_accuracy": {c: _rate(raw, c, "correct") for c in sorted(set(conds) - POISONED)},
        "zero_shot": _zero_shot(raw, y, conds),
        "detector": detector.to_dict(),
    }


def _subset(conds: list[str], pair: tuple[str, str]) -> np.ndarray:
    return np.flatnonzero(np.isin(np.asarray(conds), pair))


def _single_feature(rows: list[Any], emb: list[Any], y: np.ndarray, layers: list[int], idx: np.ndarray) -> dict[str, float | None]:
    if not idx.size:
        return {}
    return ev.single_feature_auc([rows[i] for i in idx], [emb[i] for i in idx], y[idx], layers)


def _rate(raw: list[dict[str, Any]], cond: str, key: str) -> float | None:
    vals = [bool(r.get(key)) for r in raw if cond_of(r) == cond]
    return float(np.mean(vals)) if vals else None


def _zero_shot(raw: list[dict[str, Any]], y: np.ndarray, conds: list[str]) -> dict[str, Any] | None:
    scores = [r.get("zero_shot") for r in raw]
    if any(s is None for s in scores):
        return None
    return {k: v["auc"] for k, v in ev.pair_metrics(y, np.array(scores, dtype=float), conds, CONTROL_PAIRS).items()}


def record_transfer(path: Path, shipped: dict[str, Any] | None, data: Path) -> None:
    """Write this run's evaluation of the detector at `path` into its own `info.transfer[<data>]`, so the
    app and the docs read the transfer figures from the detector file."""
    if shipped is None:
        raise RagsecError(f"--record-transfer: the detector at '{path}' could not score this run "
                          "(unreadable, or it needs more samples than --n-samples)")
    det = Detector.load(path)
    if det.info.get("trained_on") == data.name:
        raise RagsecError(f"--record-transfer: '{path}' was trained on {data.name}; its transfer figures need other data")
    det.info.setdefault("transfer", {})[data.stem] = {k: shipped[k] for k in ("auc", "tpr", "fpr", "by_control") if k in shipped}
    det.save(path)
