"""BM25 + dense (MiniLM/FAISS) + hybrid retrieval with every component score kept.

Hybrid score (Semantic Chameleon, per query): alpha * minmax(dense) + (1 - alpha) * minmax(bm25), with
min-max over the candidate pool (the union of each retriever's top-N). Because the pool contains both
top-N lists, alpha=1 reproduces the dense ranking and alpha=0 the BM25 ranking exactly.

The sparse side is `retrieval.bm25`, the dense side any `retrieval.dense.DenseSide` (in-process FAISS, a
Chroma collection, or an in-process overlay over either); this module fuses them. Every candidate in the
pool is scored by its inner product with the query (a remote store's own cosine for the rows it
proposed, equal to float32 rounding; the fetched vectors' products for the BM25-only rows), so a store
only decides which rows are candidates and the scores are the same everywhere.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import faiss
import numpy as np
from scipy import sparse

from ragsec_core._util.inputs import check_params
from ragsec_core._util.text import tokenize
from ragsec_core.data.corpus import Chunk
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.dense import (
    APPROX_MIN_CHUNKS,
    HNSW_EF_SEARCH,
    DenseSide,
    InProcessDense,
    OverlayDense,
    flat_index,
)
from ragsec_core.retrieval.embed import RESUMABLE_SHARD, Embedder, embed_resumable

INDEX_FORMAT = 1


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    rank: int  # 1-based
    bm25: float
    dense: float
    hybrid: float
    bm25_norm: float
    dense_norm: float


class HybridRetriever:
    """Holds chunks, a dense side and BM25; searches all three ways.

    The constructor takes the in-process case (embeddings in memory, a FAISS index built over them);
    `over` takes any dense side, e.g. a Chroma collection."""

    def __init__(
        self, chunks: list[Chunk], embedder: Embedder, embeddings: np.ndarray, bm25: BM25, index: faiss.Index | None = None
    ) -> None:
        self.chunks = chunks
        self.embedder = embedder
        self.bm25 = bm25
        self.dense: DenseSide = InProcessDense(embeddings, index)

    @classmethod
    def over(cls, chunks: list[Chunk], embedder: Embedder, dense: DenseSide, bm25: BM25) -> HybridRetriever:
        """A retriever whose dense side is `dense` (row i = chunk i)."""
        if len(dense) != len(chunks):
            raise ValueError(f"the dense side has {len(dense)} vectors for {len(chunks)} chunks")
        retriever = cls.__new__(cls)
        retriever.chunks, retriever.embedder, retriever.bm25, retriever.dense = chunks, embedder, bm25, dense
        return retriever

    @property
    def embeddings(self) -> np.ndarray:
        """Every chunk's vector (fetched once from a remote store: meant for sample-sized corpora)."""
        return self.dense.all_vectors()

    @property
    def in_process(self) -> bool:
        return isinstance(self.dense, InProcessDense)

    def index_info(self) -> dict[str, Any]:
        """Which dense index serves this retriever (recorded in every Pass-0 trace)."""
        return self.dense.describe()

    # ------------------------------------------------------------ building and persistence
    @classmethod
    def build(
        cls,
        chunks: list[Chunk],
        embedder: Embedder,
        cache_root: Path | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> HybridRetriever:
        """Load the persisted index for exactly these chunks, or build and persist it."""
        key = index_key(chunks, embedder.model_id)
        folder = cache_root / key if cache_root else None
        if folder and (folder / "meta.json").exists():
            try:
                return cls._load(folder, chunks, embedder)
            except (OSError, ValueError, KeyError):
                shutil.rmtree(folder, ignore_errors=True)  # damaged cache: rebuild
        texts = [c.text for c in chunks]
        parts = folder.with_name(f".{key}.parts") if folder and len(chunks) > RESUMABLE_SHARD else None
        emb = embed_resumable(embedder, texts, parts, progress) if parts else embedder.embed(texts, progress=progress)
        bm25 = BM25().fit([tokenize(t) for t in texts])
        retriever = cls(chunks, embedder, emb, bm25)
        if folder:
            retriever._save(folder)
        if parts:
            shutil.rmtree(parts, ignore_errors=True)
        return retriever

    def _save(self, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
        np.save(tmp / "embeddings.npy", self.embeddings)
        sparse.save_npz(tmp / "bm25.npz", self.bm25.matrix)
        if self.bm25.tf is not None and self.bm25.lengths is not None:
            sparse.save_npz(tmp / "bm25_tf.npz", self.bm25.tf)
            np.save(tmp / "bm25_lengths.npy", self.bm25.lengths)
        (tmp / "vocab.json").write_text(json.dumps(self.bm25.vocab))
        index = cast(InProcessDense, self.dense).index
        if isinstance(index, faiss.IndexHNSWFlat):  # minutes to rebuild at 100k: persist it
            faiss.write_index(index, str(tmp / "hnsw.faiss"))
        (tmp / "meta.json").write_text(json.dumps({"format": INDEX_FORMAT, "n_chunks": len(self.chunks)}))
        try:
            tmp.rename(folder)
        except OSError:  # another process won the race: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def _load(cls, folder: Path, chunks: list[Chunk], embedder: Embedder) -> HybridRetriever:
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("format") != INDEX_FORMAT or meta.get("n_chunks") != len(chunks):
            raise ValueError("stale index")
        bm25 = BM25()
        bm25.matrix = sparse.load_npz(folder / "bm25.npz").tocsr()
        bm25.vocab = json.loads((folder / "vocab.json").read_text())
        if (folder / "bm25_tf.npz").exists():  # caches written before the counts were stored lack them
            bm25.tf = sparse.load_npz(folder / "bm25_tf.npz").tocsr()
            bm25.lengths = np.load(folder / "bm25_lengths.npy")
        emb = np.load(folder / "embeddings.npy")
        index = None
        if len(emb) >= APPROX_MIN_CHUNKS and (folder / "hnsw.faiss").exists():
            # _save writes hnsw.faiss only from an IndexHNSWFlat, and faiss' SWIG wrapper returns the concrete class
            hnsw = cast(faiss.IndexHNSWFlat, faiss.read_index(str(folder / "hnsw.faiss")))
            hnsw.hnsw.efSearch = HNSW_EF_SEARCH
            index = hnsw
        return cls(chunks, embedder, emb, bm25, index)

    def extended(self, extra: list[Chunk], extra_embeddings: np.ndarray | None = None) -> HybridRetriever:
        """A new retriever over these chunks plus `extra` (e.g. injected documents), reusing the existing
        embeddings; BM25 is refit over the union because idf and the average length change. Not persisted;
        over a remote store the extra rows live in an in-process overlay."""
        if extra_embeddings is None:
            extra_embeddings = self.embedder.embed([c.text for c in extra]) if extra else np.zeros((0, self.dense.dim), np.float32)
        if len(extra_embeddings) != len(extra):
            raise ValueError("one embedding per extra chunk is required")
        chunks = list(self.chunks) + list(extra)
        bm25 = self._counted_bm25().extended([tokenize(c.text) for c in extra])
        if (side := self._flat_side()) is not None:
            emb = np.vstack([side.embeddings, np.asarray(extra_embeddings, dtype=side.embeddings.dtype)])
            return HybridRetriever(chunks, self.embedder, emb, bm25, flat_index(emb))
        # A remote store, or an HNSW graph that would take a minute to rebuild: the extra rows lie over it
        return HybridRetriever.over(chunks, self.embedder, OverlayDense(self.dense, {}, extra_embeddings), bm25)

    def _flat_side(self) -> InProcessDense | None:
        """The in-process flat index, if that is the dense side: changed copies of it stay flat (exact)
        whatever their size, instead of crossing into HNSW at APPROX_MIN_CHUNKS. An HNSW graph or a
        store gets an overlay instead: a graph is never rebuilt for a change."""
        d = self.dense
        return d if isinstance(d, InProcessDense) and not isinstance(d.index, faiss.IndexHNSWFlat) else None

    def _counted_bm25(self) -> BM25:
        """BM25 with its term counts, which `BM25.extended` needs; an index cached before they were stored
        is refit once here (same scores) and kept."""
        if self.bm25.tf is None:
            self.bm25 = BM25().fit([tokenize(c.text) for c in self.chunks])
        return self.bm25

    def with_replaced(self, replacements: dict[int, Chunk]) -> HybridRetriever:
        """A new retriever with the chunks at these rows replaced (e.g. a host passage with a poison planted
        in it): only they are re-embedded, BM25 is refit. Over a remote store the new vectors mask the
        originals in an in-process overlay; the store is never written."""
        rows = list(replacements)  # the caller's order: the embedding batch is exactly the one it would embed
        chunks = list(self.chunks)
        for r in rows:
            chunks[r] = replacements[r]
        vecs = self.embedder.embed([chunks[r].text for r in rows]) if rows else np.zeros((0, self.dense.dim), np.float32)
        bm25 = BM25().fit([tokenize(c.text) for c in chunks])
        if (side := self._flat_side()) is not None:
            emb = side.embeddings.copy()
            emb[rows] = vecs
            return HybridRetriever(chunks, self.embedder, emb, bm25, flat_index(emb))
        return HybridRetriever.over(chunks, self.embedder, OverlayDense(self.dense, dict(zip(rows, vecs)), np.zeros((0, self.dense.dim))), bm25)

    # ------------------------------------------------------------ search
    def search(self, query: str, k: int = 5, alpha: float = 0.5) -> list[Hit]:
        """Top-k hybrid hits of `query`; `k` and `alpha` are checked here, at the public boundary."""
        check_params(k, alpha)
        return self.search_unchecked(query, k, alpha)

    def search_embedded(self, query: str, q: np.ndarray, k: int = 5, alpha: float = 0.5) -> list[Hit]:
        """`search` with the query's normalised embedding `q` given (embed a query once, search many ways)."""
        check_params(k, alpha)
        return self.search_unchecked(query, k, alpha, q)

    def search_unchecked(self, query: str, k: int, alpha: float, q: np.ndarray | None = None) -> list[Hit]:
        """The search itself, for callers that have already validated `k` and `alpha` with `check_params`
        (`Pipeline.ask`, loops over a grid): parameters are checked once per request, not once per layer.
        `q` is the query's normalised embedding when the caller has it."""
        if q is None:
            q = self.embedder.embed([query])[0]
        n = len(self.chunks)
        depth = min(n, max(100, 10 * k))
        q = np.asarray(q, dtype=np.float32)
        top = self.dense.top(q, depth)
        bm25_all = self.bm25.scores(query)
        bm25_top = np.argpartition(-bm25_all, depth - 1)[:depth] if depth < n else np.arange(n)
        pool = np.unique(np.concatenate([top[0], bm25_top]))
        dense = self.dense.scores(q, pool, top)
        bm25 = bm25_all[pool]
        dn, bn = minmax(dense), minmax(bm25)
        hybrid = alpha * dn + (1 - alpha) * bn
        order = np.lexsort((pool, -hybrid))[:k]
        return [
            Hit(self.chunks[pool[i]], r, float(bm25[i]), float(dense[i]), float(hybrid[i]), float(bn[i]), float(dn[i]))
            for r, i in enumerate(order, 1)
        ]


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def index_key(chunks: list[Chunk], embedder_id: str) -> str:
    import hashlib

    h = hashlib.sha256(f"v{INDEX_FORMAT}|{embedder_id}|".encode())
    for c in chunks:
        h.update(c.chunk_id.encode("utf-8", "surrogatepass") + b"\x1f" + c.text.encode("utf-8", "surrogatepass") + b"\x1e")
    return h.hexdigest()[:24]
