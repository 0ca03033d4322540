"""BM25 (the sparse side of hybrid retrieval): a small sparse-matrix implementation of rank-bm25's
BM25Okapi (same idf floor, k1, b), so its scores equal rank-bm25's while a query costs one sparse
mat-vec instead of a Python loop over documents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from ragsec_core._util.text import tokenize


class BM25:
    """BM25Okapi with a precomputed (documents x vocabulary) term-score matrix."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.vocab: dict[str, int] = {}
        self.matrix = sparse.csr_matrix((0, 0), dtype=np.float32)
        self._csc: tuple[sparse.csr_matrix, sparse.csc_matrix] | None = None  # (of matrix, column-major copy)

    def fit(self, corpus_tokens: Sequence[Sequence[str]]) -> BM25:
        n_docs = len(corpus_tokens)
        counts = [Counter(toks) for toks in corpus_tokens]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        self.vocab = {t: i for i, t in enumerate(sorted(df))}
        idf = np.array([np.log(n_docs - df[t] + 0.5) - np.log(df[t] + 0.5) for t in self.vocab], dtype=np.float64)
        floor = self.epsilon * (idf.mean() if len(idf) else 0.0)
        idf[idf < 0] = floor
        lengths = np.array([len(t) for t in corpus_tokens], dtype=np.float64)
        avgdl = lengths.mean() if n_docs and lengths.mean() > 0 else 1.0
        rows, cols, vals = [], [], []
        for d, c in enumerate(counts):
            norm = self.k1 * (1 - self.b + self.b * lengths[d] / avgdl)
            for t, tf in c.items():
                j = self.vocab[t]
                rows.append(d)
                cols.append(j)
                vals.append(idf[j] * tf * (self.k1 + 1) / (tf + norm))
        self.matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(n_docs, len(self.vocab)), dtype=np.float64)
        return self

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every document: the query terms' columns times their counts. A column-major copy of
        the matrix makes this touch only those columns (measured ~10x faster than a full mat-vec at 100k)."""
        counts = Counter(t for t in tokenize(query) if t in self.vocab)
        if not counts:
            return np.zeros(self.matrix.shape[0], dtype=np.float64)
        if self._csc is None or self._csc[0] is not self.matrix:  # built lazily, rebuilt if refit/reloaded
            self._csc = (self.matrix, self.matrix.tocsc())
        cols = [self.vocab[t] for t in counts]
        return np.asarray(self._csc[1][:, cols] @ np.array(list(counts.values()), dtype=np.float64)).ravel()
