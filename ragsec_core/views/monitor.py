"""View model for the Corpus monitor page: the CLI's default query sets and thresholds, labels, table rows.

It reuses what `ragsec bench monitor` does (built-in scenario families as sensitive queries, their benign
queries plus the corpus demo queries as benign), so the page and the CLI flag the same documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.chameleon.scenarios import builtin_scenarios
from ragsec_core.data.corpus import Corpus
from ragsec_core.monitor.detectors import (
    DETECTORS,
    QPD_THRESHOLD_GENERAL,
    QPD_THRESHOLD_TECHNICAL,
    MonitorReport,
    default_query_sets,
    evaluate,
    run_monitor,
)
from ragsec_core.retrieval.hybrid import HybridRetriever

DETECTOR_LABELS = {
    "qpd": "QPD (eq. 3)",
    "qpd_differential": "QPD differential",
    "keyword_anomaly": "keyword anomaly",
    "semantic_drift": "semantic drift",
    "clustering": "co-retrieval clustering",
}


def default_queries(corpus: Corpus) -> tuple[list[str], list[str]]:
    return default_query_sets(builtin_scenarios(), corpus)


def qpd_threshold(corpus_name: str) -> float:
    """The security corpus gets the paper's technical-corpus threshold, every other corpus the general one."""
    return QPD_THRESHOLD_TECHNICAL if "secops" in corpus_name else QPD_THRESHOLD_GENERAL


def poisoned_doc_ids(corpus: Corpus) -> set[str]:
    """Documents a variant planted (gold spans or a poison target): the labels of the ROC."""
    return {d.id for d in corpus.documents if d.poison_spans or d.poison_target is not None}


@dataclass
class MonitorView:
    report: MonitorReport
    poisoned: set[str]
    evaluation: dict[str, Any] | None  # None when the corpus has no labels (clean corpus)

    def rows(self, flagged_only: bool = False) -> list[dict[str, Any]]:
        docs = self.report.flagged if flagged_only else self.report.docs
        return [
            {
                "chunk": escape_controls(d.chunk_id),
                "title": escape_controls(d.title),
                "known poison": d.doc_id in self.poisoned,
                "flags": ", ".join(d.flags),
                "QPD": round(d.qpd, 3),
                "QPD diff": round(d.qpd_differential, 3),
                "keyword anomaly": round(d.keyword_anomaly, 3),
                "drift": round(d.semantic_drift, 4),
                "clustering": round(d.clustering, 3),
                "cluster": d.cluster,
                "r_sensitive": round(d.sensitive_rate, 3),
                "r_benign": round(d.benign_rate, 3),
            }
            for d in docs
        ]

    def best_f1_rows(self) -> list[dict[str, Any]]:
        if not self.evaluation:
            return []
        out = []
        for det in DETECTORS:
            e = self.evaluation[det]
            b = e["best_f1"]
            out.append({"detector": DETECTOR_LABELS[det], "best F1": round(b["f1"], 3),
                        "precision": round(b["precision"], 3), "recall": round(b["recall"], 3),
                        "threshold": b["threshold"], "AUC": round(e["auc"], 3)})
        return out


def monitor_corpus(corpus: Corpus, retriever: HybridRetriever, k: int = 5, alpha: float = 0.5) -> MonitorView:
    sensitive, benign = default_queries(corpus)
    report = run_monitor(retriever, sensitive, benign, k=k, alpha=alpha, qpd_threshold=qpd_threshold(corpus.name))
    poisoned = poisoned_doc_ids(corpus)
    present = {d.doc_id for d in report.docs}
    evaluation = None
    if poisoned & present and present - poisoned:
        try:
            evaluation = evaluate(report, poisoned)
        except RagsecError:
            evaluation = None
    return MonitorView(report, poisoned, evaluation)
