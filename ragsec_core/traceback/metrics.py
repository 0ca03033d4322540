"""Character-level localisation metrics (RAGCharacter eq. 1-3).

Spans are sets of character positions in one coordinate system (prompt-global in the benchmark);
overlapping spans count each character once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragsec_core.data.spans import Span, merge


def _intersection(a: list[Span], b: list[Span]) -> int:
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class CharScores:
    f1: float
    iou: float
    fpr: float  # share of predicted characters outside the truth (over-attribution)
    precision: float
    recall: float


def char_scores(predicted: Iterable[Span], truth: Iterable[Span]) -> CharScores:
    p, t = merge(predicted), merge(truth)
    np_, nt = sum(e - s for s, e in p), sum(e - s for s, e in t)
    inter = _intersection(p, t)
    union = np_ + nt - inter
    prec = inter / np_ if np_ else 0.0
    rec = inter / nt if nt else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return CharScores(f1, inter / union if union else 0.0, (np_ - inter) / np_ if np_ else 0.0, prec, rec)

