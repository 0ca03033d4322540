"""Corpus monitor (Semantic Chameleon §4): per-document poisoning scores, flags and operating points.

Detectors, every one a per-chunk score where higher means more suspicious:

* **semantic drift**: 1 - cos(e_x, mean embedding of the corpus) (paper §4.1 (1)).
* **keyword anomaly**: mean idf of the chunk's tokens, idf = ln((N + 1) / (df + 1)) + 1 (§4.1 (2)).
* **QPD**: with retrieval rates r_s (over the sensitive query family) and r_b (over benign queries) at
  the deployed alpha and k, QPD = r_s / (r_s + r_b) (eq. 3; 0 when never retrieved), and the released
  code's differential form max(0, r_s - r_b), which is what the flag thresholds (0.15 general, 0.20
  technical corpora) apply to: a chunk retrieved once for a sensitive query and never otherwise has QPD 1,
  so eq. 3 alone cannot be thresholded meaningfully on small query sets.
* **co-retrieval clustering**: Q(x) = the queries (benign and sensitive) whose top-k holds x; a pair's
  score is Jaccard(Q(a), Q(b)) * m / (m + 1) with m = |Q(a) & Q(b)| (shrunk when support is small), a
  chunk's score is its best pair's; pairs scoring >= 0.5 with m >= 2 are linked into clusters (§4.1 (5)).

Static scores are flagged by a robust z-score (median / MAD) >= 3.5. With labels, `evaluate` gives the
best F1, the ROC (with AUC) and operating points at fixed FPRs with alerts/day = FPR x queries/day x k
(every retrieved chunk is one check; paper: 0.01 % FPR is one false alarm per 10,000 retrievals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import tokenize
from ragsec_core.data.corpus import Corpus, read_json
from ragsec_core.retrieval.hybrid import HybridRetriever

QPD_THRESHOLD_GENERAL, QPD_THRESHOLD_TECHNICAL = 0.15, 0.20
ROBUST_Z = 3.5
CLUSTER_LINK, CLUSTER_SUPPORT = 0.5, 2
DETECTORS = ("keyword_anomaly", "semantic_drift", "qpd", "qpd_differential", "clustering")


def semantic_drift(embeddings: np.ndarray) -> np.ndarray:
    c = embeddings.mean(0)
    c = c / (np.linalg.norm(c) or 1.0)
    return 1.0 - embeddings @ c


def keyword_anomaly(texts: Sequence[str]) -> np.ndarray:
    toks = [tokenize(t) for t in texts]
    df: dict[str, int] = {}
    for ts in toks:
        for t in set(ts):
            df[t] = df.get(t, 0) + 1
    n = len(texts)
    return np.array([np.mean([math.log((n + 1) / (df[t] + 1)) + 1 for t in ts]) if ts else 0.0 for ts in toks])


def retrieval_matrix(retriever: HybridRetriever, queries: Sequence[str], k: int, alpha: float) -> np.ndarray:
    """Boolean [queries x chunks]: chunk j in query i's top-k."""
    idx = {c.chunk_id: j for j, c in enumerate(retriever.chunks)}
    m = np.zeros((len(queries), len(retriever.chunks)), dtype=bool)
    if queries:
        qe = retriever.embedder.embed(list(queries))
        for i, q in enumerate(queries):
            for h in retriever.search_embedded(q, qe[i], k=k, alpha=alpha):
                m[i, idx[h.chunk.chunk_id]] = True
    return m


def qpd(sensitive: np.ndarray, benign: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(QPD ratio, differential, sensitive rate, benign rate) per chunk from two retrieval matrices."""
    rs = sensitive.mean(0) if len(sensitive) else np.zeros(sensitive.shape[1])
    rb = benign.mean(0) if len(benign) else np.zeros(benign.shape[1])
    tot = rs + rb
    ratio = np.divide(rs, tot, out=np.zeros_like(rs, dtype=float), where=tot > 0)
    return ratio, np.maximum(0.0, rs - rb), rs, rb


def coretrieval_clusters(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best pair score per chunk, cluster id per chunk or -1) from a [queries x chunks] matrix.

    Only chunks some query retrieved can pair with anything (the others score 0, in no cluster), so the
    pairwise matrices are built over those few hundred columns, not over a 69k x 69k square."""
    n = m.shape[1]
    active = np.flatnonzero(m.any(0))
    score, cluster = np.zeros(n), np.full(n, -1)
    sub_score, sub_cluster = _clusters(m[:, active])
    score[active], cluster[active] = sub_score, sub_cluster
    return score, cluster


def _clusters(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = m.shape[1]
    x = m.astype(np.int32)
    inter = x.T @ x
    cnt = np.diag(inter).astype(float)
    union = cnt[:, None] + cnt[None, :] - inter
    jac = np.divide(inter, union, out=np.zeros((n, n)), where=union > 0)
    pair = jac * inter / (inter + 1.0)
    np.fill_diagonal(pair, 0.0)
    score = pair.max(1) if n else np.zeros(0)
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in zip(*np.nonzero(np.triu((pair >= CLUSTER_LINK) & (inter >= CLUSTER_SUPPORT), 1))):
        parent[find(int(a))] = find(int(b))
    roots = [find(i) for i in range(n)]
    sizes: dict[int, int] = {}
    for r in roots:
        sizes[r] = sizes.get(r, 0) + 1
    ids = {r: i for i, r in enumerate(sorted(r for r, s in sizes.items() if s > 1))}
    return score, np.array([ids.get(r, -1) for r in roots])


def robust_z(x: np.ndarray) -> np.ndarray:
    med = np.median(x)
    mad = np.median(np.abs(x - med)) * 1.4826
    return (x - med) / mad if mad > 0 else np.zeros_like(x)


@dataclass
class DocScore:
    chunk_id: str
    doc_id: str
    title: str
    keyword_anomaly: float
    semantic_drift: float
    qpd: float
    qpd_differential: float
    sensitive_rate: float
    benign_rate: float
    clustering: float
    cluster: int
    flags: list[str] = field(default_factory=list)


@dataclass
class MonitorReport:
    docs: list[DocScore]
    config: dict

    def scores(self, detector: str) -> np.ndarray:
        return np.array([getattr(d, detector) for d in self.docs], dtype=float)

    @property
    def flagged(self) -> list[DocScore]:
        return sorted((d for d in self.docs if d.flags), key=lambda d: (-len(d.flags), -d.qpd_differential))

    def to_dict(self, all_docs: bool = False) -> dict:
        rows = self.docs if all_docs else self.flagged
        return {"config": self.config, "n_chunks": len(self.docs), "n_flagged": len(self.flagged),
                "docs": [asdict(d) for d in rows]}


def run_monitor(
    retriever: HybridRetriever,
    sensitive: Sequence[str],
    benign: Sequence[str],
    k: int = 5,
    alpha: float = 0.5,
    qpd_threshold: float = QPD_THRESHOLD_TECHNICAL,
) -> MonitorReport:
    if not sensitive or not benign:
        raise RagsecError("the monitor needs at least one sensitive and one benign query")
    texts = [c.text for c in retriever.chunks]
    kw = keyword_anomaly(texts)
    drift = semantic_drift(retriever.embeddings)
    ms = retrieval_matrix(retriever, sensitive, k, alpha)
    mb = retrieval_matrix(retriever, benign, k, alpha)
    ratio, diff, rs, rb = qpd(ms, mb)
    clus, cid = coretrieval_clusters(np.vstack([ms, mb]))
    zk, zd = robust_z(kw), robust_z(drift)
    docs = []
    for j, c in enumerate(retriever.chunks):
        flags = []
        if diff[j] > qpd_threshold:
            flags.append("qpd")
        if zk[j] >= ROBUST_Z:
            flags.append("keyword_anomaly")
        if zd[j] >= ROBUST_Z:
            flags.append("semantic_drift")
        if cid[j] >= 0 and rs[j] > rb[j]:
            flags.append("clustering")
        docs.append(DocScore(c.chunk_id, c.doc_id, c.title, float(kw[j]), float(drift[j]), float(ratio[j]),
                             float(diff[j]), float(rs[j]), float(rb[j]), float(clus[j]), int(cid[j]), flags))
    cfg = {"k": k, "alpha": alpha, "qpd_threshold": qpd_threshold, "robust_z": ROBUST_Z,
           "n_sensitive": len(sensitive), "n_benign": len(benign)}
    return MonitorReport(docs, cfg)


# ---------------------------------------------------------------- evaluation with labels

def _at_least(sorted_values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """For each threshold t, how many values are >= t (values sorted ascending): one binary search each,
    so a 69k-chunk corpus costs O(N log N) instead of a pass over every chunk per threshold."""
    return len(sorted_values) - np.searchsorted(sorted_values, thresholds, side="left")


def roc(scores: np.ndarray, labels: np.ndarray) -> dict:
    """ROC points over all thresholds (score >= t flags) and the AUC (ties count one half). Points inside
    a run of equal TPR are dropped: the polyline is the same, and it stays small on a large corpus."""
    pos, neg = np.sort(scores[labels]), np.sort(scores[~labels])
    thr = np.unique(np.concatenate([[np.inf], scores]))[::-1]
    tpr = _at_least(pos, thr) / len(pos) if len(pos) else np.zeros(len(thr))
    fpr = _at_least(neg, thr) / len(neg) if len(neg) else np.zeros(len(thr))
    keep = np.ones(len(thr), dtype=bool)
    if len(thr) > 2:
        keep[1:-1] = (tpr[1:-1] != tpr[:-2]) | (tpr[1:-1] != tpr[2:])
    if len(pos) and len(neg):
        below = np.searchsorted(neg, pos, side="left")  # negatives strictly below each positive
        ties = np.searchsorted(neg, pos, side="right") - below
        auc = float((below.sum() + 0.5 * ties.sum()) / (len(pos) * len(neg)))
    else:
        auc = float("nan")
    return {"fpr": fpr[keep].tolist(), "tpr": tpr[keep].tolist(), "thresholds": thr[keep].tolist(), "auc": auc}


def best_f1(scores: np.ndarray, labels: np.ndarray) -> dict:
    """The threshold of best F1 (the lowest one on ties), its precision and recall."""
    best = {"f1": 0.0, "threshold": float("inf"), "precision": 0.0, "recall": 0.0}
    thr = np.unique(scores)
    tp = _at_least(np.sort(scores[labels]), thr)
    pred = _at_least(np.sort(scores), thr)
    ok = tp > 0
    if not ok.any():
        return best
    p, r = tp[ok] / pred[ok], tp[ok] / labels.sum()
    f1 = 2 * p * r / (p + r)
    i = int(np.argmax(f1))
    return {"f1": float(f1[i]), "threshold": float(thr[ok][i]), "precision": float(p[i]), "recall": float(r[i])}


def operating_point(scores: np.ndarray, labels: np.ndarray, target_fpr: float, queries_per_day: int, k: int) -> dict:
    """Lowest threshold whose false-positive rate on benign chunks is <= target_fpr."""
    neg, pos = np.sort(scores[~labels]), np.sort(scores[labels])
    thr = np.unique(scores)[::-1]
    fprs = _at_least(neg, thr) / max(1, len(neg))  # rises as the threshold falls
    over = np.flatnonzero(fprs > target_fpr)
    last_ok = (over[0] if len(over) else len(thr)) - 1
    chosen = float(thr[last_ok]) if last_ok >= 0 else float("inf")
    fpr = float(_at_least(neg, np.array([chosen]))[0] / len(neg)) if len(neg) else 0.0
    recall = float(_at_least(pos, np.array([chosen]))[0] / len(pos)) if len(pos) else 0.0
    return {"target_fpr": target_fpr, "threshold": chosen, "fpr": fpr, "recall": recall,
            "fpr_resolution": 1.0 / max(1, len(neg)), "alerts_per_day": fpr * queries_per_day * k}


def evaluate(report: MonitorReport, poisoned: set[str], fprs: Sequence[float] = (0.0001, 0.001, 0.01),
             queries_per_day: int = 10_000) -> dict:
    """Per detector: best F1, ROC/AUC and fixed-FPR operating points; labels = chunk's doc_id in `poisoned`."""
    labels = np.array([d.doc_id in poisoned for d in report.docs])
    if not labels.any() or labels.all():
        raise RagsecError("evaluation needs both poisoned and clean documents")
    k = int(report.config["k"])
    out: dict = {"n_poisoned": int(labels.sum()), "n_clean": int((~labels).sum()),
                 "queries_per_day": queries_per_day, "k": k}
    for det in DETECTORS:
        s = report.scores(det)
        r = roc(s, labels)
        out[det] = {"best_f1": best_f1(s, labels), "auc": r["auc"],
                    "roc": {"fpr": r["fpr"], "tpr": r["tpr"]},
                    "operating_points": [operating_point(s, labels, f, queries_per_day, k) for f in fprs]}
    return out


def load_query_sets(path: str | Path) -> tuple[list[str], list[str]]:
    """`{"sensitive": [...], "benign": [...]}`, or a list of `{"query", "sensitive": bool}` records."""
    p = Path(path).expanduser()
    raw = read_json(p, "query file")
    if isinstance(raw, dict):
        sens, ben = raw.get("sensitive"), raw.get("benign")
    elif isinstance(raw, list) and all(isinstance(r, dict) and "query" in r for r in raw):
        sens = [r["query"] for r in raw if r.get("sensitive")]
        ben = [r["query"] for r in raw if not r.get("sensitive")]
    else:
        sens = ben = None
    if not isinstance(sens, list) or not isinstance(ben, list) or not all(isinstance(q, str) for q in sens + ben):
        raise RagsecError(f"'{p}': expected {{\"sensitive\": [queries], \"benign\": [queries]}}")
    if not sens or not ben:
        raise RagsecError(f"'{p}': needs at least one sensitive and one benign query")
    return sens, ben


def qpd_threshold(value: float | None, corpus_name: str) -> float:
    """The QPD flag threshold: the user's, else the technical corpora's stricter default (their sensitive
    queries share more vocabulary with benign ones) or the general one."""
    if value is not None:
        if not 0 <= value < 1:
            raise RagsecError(f"--qpd-threshold must be in [0, 1) (got {value})")
        return value
    return QPD_THRESHOLD_TECHNICAL if "secops" in corpus_name else QPD_THRESHOLD_GENERAL


class _Scenario(Protocol):
    """What the monitor reads of a Chameleon scenario (the monitor does not depend on the attack)."""

    @property
    def target_query(self) -> str: ...
    @property
    def sensitive_queries(self) -> Sequence[str]: ...
    @property
    def benign_queries(self) -> Sequence[str]: ...


def default_query_sets(scenarios: Sequence[_Scenario], corpus: Corpus) -> tuple[list[str], list[str]]:
    """Sensitive queries = the scenarios' targets and their families; benign = the scenarios' benign
    queries plus the corpus's demo queries (duplicates dropped, order kept)."""
    sens = list(dict.fromkeys(q for s in scenarios for q in (s.target_query, *s.sensitive_queries)))
    ben = list(dict.fromkeys([q for s in scenarios for q in s.benign_queries] + [q.query for q in corpus.queries]))
    return sens, ben
