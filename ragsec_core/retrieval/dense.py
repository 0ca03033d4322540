"""The dense side of hybrid retrieval, row-addressed (row i is chunk i of the retriever).

`DenseSide` is what `HybridRetriever` needs of a vector store: the top rows for a query, the vectors of
given rows, and the pool's scores (in-process: one exact inner product for every candidate; a remote
store: its own cosine for the rows it proposed, the fetched vectors' products for the BM25-only rows, equal
to float32 rounding; the store's approximate search only chooses the candidates). Three sides implement it: `InProcessDense` (FAISS over the
embeddings in memory), `retrieval.chroma.ChromaDense` (a Chroma collection) and `OverlayDense`
(in-process changes laid over a read-only side, so planting never writes into a shared store).
"""

from __future__ import annotations

from typing import Any, Protocol

import faiss
import numpy as np

# Corpora of at least this many chunks get an HNSW dense index (`ragsec bench speed`: recall@10 >= 0.99);
# smaller ones keep the exact IndexFlatIP, so alpha = 1 is exactly the dense ranking there.
APPROX_MIN_CHUNKS = 50_000
# The graph's search breadth, >= the candidate depth searched (max(100, 10k)). 128 was enough on the 100k
# speed-bench passages (recall@10 0.997) but not on the technical corpus's real documentation (180 scenario
# queries, 68,782 passages: recall@10 0.929 / @100 0.886 at 128; 0.988 / 0.973 at 512, equal to the Chroma
# collection's at its search_ef 512; 1.7 ms per search).
HNSW_EF_SEARCH = 512


class DenseSide(Protocol):
    """A vector store seen as rows 0..len-1 of normalised float32 vectors."""

    dim: int

    def __len__(self) -> int: ...

    def top(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """The (at most) `depth` best rows for the normalised query `q`, best first, with their scores."""
        ...

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of `rows`, in that order."""
        ...

    def scores(self, q: np.ndarray, rows: np.ndarray, top: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Inner products of `rows` with `q`; `top` is what `top(q, ...)` returned for this query, whose
        scores a remote store reuses so that only the other rows' vectors travel."""
        ...

    def all_vectors(self) -> np.ndarray:
        """Every row's vector (the corpus matrix the Chameleon optimiser and the drift detector read)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Which index served a search, for the Pass-0 trace (no credentials)."""
        ...


def dense_index(embeddings: np.ndarray) -> faiss.Index:
    """Exact inner product below APPROX_MIN_CHUNKS; HNSW from there on, where exact search dominates
    the query time (measured at 100k: flat 20-30 ms, HNSW ~0.5 ms with recall@10 0.997)."""
    if len(embeddings) < APPROX_MIN_CHUNKS:
        return flat_index(embeddings)
    hnsw = faiss.IndexHNSWFlat(embeddings.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 80
    hnsw.hnsw.efSearch = HNSW_EF_SEARCH
    hnsw.add(embeddings)
    return hnsw


def flat_index(embeddings: np.ndarray) -> faiss.Index:
    """The exact inner-product index over `embeddings`."""
    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(embeddings)
    return index


def reuse_top_scores(side: DenseSide, q: np.ndarray, rows: np.ndarray, top: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Scores of `rows`: the store's own for those among its top rows (its cosine, equal to the inner
    product of the normalised vectors to float32 rounding), fetched vectors' products for the rest."""
    known = dict(zip(top[0].tolist(), top[1].tolist()))
    out = np.array([known.get(int(r), np.nan) for r in rows], dtype=np.float32)
    missing = np.isnan(out)
    if missing.any():
        out[missing] = side.vectors(rows[missing]) @ q
    return out


class InProcessDense:
    """The embeddings in memory and a FAISS index over them (ragsec's own index)."""

    def __init__(self, embeddings: np.ndarray, index: faiss.Index | None = None) -> None:
        self.embeddings = embeddings
        self.index = index if index is not None else dense_index(embeddings)
        self.dim = int(embeddings.shape[1])

    def __len__(self) -> int:
        return len(self.embeddings)

    def top(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        scores, rows = self.index.search(q[None, :], depth)
        keep = rows[0] >= 0
        return rows[0][keep], scores[0][keep]

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        return self.embeddings[rows]

    def scores(self, q: np.ndarray, rows: np.ndarray, top: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return self.embeddings[rows] @ q  # the vectors are here: one exact product for every row

    def all_vectors(self) -> np.ndarray:
        return self.embeddings

    def describe(self) -> dict[str, Any]:
        kind = "faiss-hnsw" if isinstance(self.index, faiss.IndexHNSWFlat) else "faiss-flat"
        return {"kind": kind, "vectors": len(self)}


class OverlayDense:
    """In-process changes over a read-only side: `replaced` rows mask the base's vectors of those rows, and
    `extra` rows follow the base's. Planting for benchmarks and the lab goes here, never into the store."""

    def __init__(self, base: DenseSide, replaced: dict[int, np.ndarray], extra: np.ndarray) -> None:
        self.base, self.dim = base, base.dim
        self.replaced = {int(r): np.asarray(v, dtype=np.float32) for r, v in replaced.items()}
        self.extra = np.asarray(extra, dtype=np.float32).reshape(-1, self.dim)
        self._masked = np.array(sorted(self.replaced), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.base) + len(self.extra)

    def _own_rows(self) -> np.ndarray:
        return np.concatenate([self._masked, np.arange(len(self.base), len(self), dtype=np.int64)])

    def top(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        rows, scores = self.base.top(q, min(len(self.base), depth + len(self._masked)))
        keep = ~np.isin(rows, self._masked)
        own = self._own_rows()
        all_rows = np.concatenate([rows[keep].astype(np.int64), own])
        all_scores = np.concatenate([scores[keep].astype(np.float32), self.vectors(own) @ q])
        order = np.lexsort((all_rows, -all_scores))[:depth]
        return all_rows[order], all_scores[order]

    def scores(self, q: np.ndarray, rows: np.ndarray, top: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return reuse_top_scores(self, q, rows, top)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        from_base = (rows < len(self.base)) & ~np.isin(rows, self._masked)
        if from_base.any():
            out[from_base] = self.base.vectors(rows[from_base])
        for i in np.flatnonzero(~from_base):
            r = int(rows[i])
            out[i] = self.replaced[r] if r in self.replaced else self.extra[r - len(self.base)]
        return out

    def all_vectors(self) -> np.ndarray:
        out = np.array(self.base.all_vectors(), dtype=np.float32)
        for r, v in self.replaced.items():
            out[r] = v
        return np.vstack([out, self.extra])

    def describe(self) -> dict[str, Any]:
        return self.base.describe() | {"overlay": {"replaced": len(self.replaced), "extra": len(self.extra)}}
