"""`ragsec bench speed --chroma`: hybrid query latency with ragsec's in-process index and with a Chroma
collection as the dense side, on the same passages and queries, interleaved, at each size (100k, 1M).

Why interleaved in one run: the cores are shared, so only side-by-side figures compare. Both sides use
the speed bench's corpus (real sentences, passage vectors = normalised mean of sentence vectors; see
`speed_corpus`) and the same BM25; the Chroma side goes through the product's own code path
(`chroma.build_collection`, `chroma.open_dense`, `HybridRetriever.over`), so its figure is what
`ragsec ask --index` pays per query. Collections and the in-process HNSW graphs are built once and
cached under `<cache>/speed/` (a 1M build takes long on two cores); a rerun only queries.
"""

from __future__ import annotations

import statistics
import sys
import time
from functools import partial
from typing import Any

import faiss
import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.paths import cache_dir
from ragsec_core._util.text import tokenize
from ragsec_core.bench import speed_corpus as sc
from ragsec_core.bench.speed_parts import timed
from ragsec_core.data.corpus import Chunk
from ragsec_core.retrieval import chroma
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.dense import APPROX_MIN_CHUNKS, InProcessDense, dense_index
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.retrieval.hybrid import HybridRetriever

WARMUP = 3


def size_label(n: int) -> str:
    """100000 -> '100k', 1000000 -> '1m', 205 -> '205' (the keys of the results JSON)."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    return f"{n // 1000}k" if n >= 1000 else str(n)


def chroma_latency(sizes: list[int], n_queries: int, location: str | None = None) -> dict[str, Any]:
    """p50/p95 of `HybridRetriever.search` (k=5, alpha=0.5, query embedding included) in-process and
    through Chroma at each size; `location` is a server (`chroma://HOST:PORT`), else an embedded folder."""
    if why := sc.shared_missing():
        return {"chroma_skipped": why}
    embedder = Embedder()
    corpus = sc.speed_corpus(max(sizes))
    vecs = corpus.vectors(sc.cached_embeddings(corpus.sentences, embedder))
    texts = corpus.texts
    queries = sc.queries(n_queries)
    out: dict[str, Any] = {"chroma_location": location or "embedded (PersistentClient)", "chroma_queries": len(queries)}
    for n in sorted(sizes):
        out |= latency_at_size(texts[:n], vecs[:n], embedder, queries, _collection_url(location, n))
    return out


def _collection_url(location: str | None, n: int) -> str:
    name = f"ragsec-speed-{size_label(n)}"
    if location:
        return f"{location.rstrip('/')}/{name}"
    return f"chroma:{cache_dir() / 'speed' / 'chroma'}/{name}"


def latency_at_size(texts: list[str], vecs: np.ndarray, embedder: Embedder, queries: list[str], url: str) -> dict[str, Any]:
    """Both sides over `texts` (vectors `vecs`), the collection at `url` built first unless cached."""
    label = size_label(len(texts))
    chunks = [Chunk(f"p{i}#0", f"p{i}", t, 0, len(t)) for i, t in enumerate(texts)]
    t0 = time.perf_counter()
    bm25 = BM25().fit([tokenize(t) for t in texts])
    m = bm25.matrix
    res: dict[str, Any] = {f"bm25_build_s_{label}": round(time.perf_counter() - t0, 1),
                           f"bm25_matrix_mb_{label}": round((m.data.nbytes + m.indices.nbytes + m.indptr.nbytes) / 1e6, 1),
                           f"vectors_mb_{label}": round(vecs.nbytes / 1e6, 1)}
    local, res[f"hnsw_build_s_{label}"], res[f"dense_index_mb_{label}"] = _in_process(chunks, vecs, embedder, bm25)
    dense, res[f"chroma_build_s_{label}"], res[f"chroma_open_s_{label}"] = _open_collection(url, chunks, vecs, embedder)
    remote = HybridRetriever.over(chunks, embedder, dense, bm25)
    times: dict[str, list[float]] = {"local": [], "chroma": [], "bm25": [], "embed": []}
    same = 0
    for i, q in enumerate(queries[:WARMUP] + queries):
        a, ta = timed(partial(local.search, q, k=5, alpha=0.5))
        b, tb = timed(partial(remote.search, q, k=5, alpha=0.5))
        if i >= WARMUP:
            times["local"].append(ta)
            times["chroma"].append(tb)
            same += [h.chunk.chunk_id for h in a] == [h.chunk.chunk_id for h in b]
            times["bm25"].append(timed(partial(bm25.scores, q))[1])  # the parts of the in-process figure
            times["embed"].append(timed(partial(embedder.embed, [q]))[1])
    for side, suffix in (("local", ""), ("chroma", "_chroma")):
        res[f"hybrid_p50_ms_{label}{suffix}"] = round(statistics.median(times[side]), 2)
        res[f"hybrid_p95_ms_{label}{suffix}"] = round(float(np.percentile(times[side], 95)), 2)
    res[f"hybrid_top5_same_{label}_chroma"] = f"{same}/{len(queries)}"
    res[f"hybrid_bm25_ms_{label}"] = round(statistics.median(times["bm25"]), 2)
    res[f"hybrid_query_embed_ms_{label}"] = round(statistics.median(times["embed"]), 2)
    res[f"hybrid_index_{label}"] = local.index_info()["kind"]
    return res


def _in_process(chunks: list[Chunk], vecs: np.ndarray, embedder: Embedder, bm25: BM25) -> tuple[HybridRetriever, float, float]:
    """ragsec's own index at this size, its HNSW graph cached (minutes to build at 1M); with the seconds
    it took and the index's size in MB (vectors included)."""
    path = cache_dir() / "speed" / f"hnsw-{len(vecs)}-{_digest(vecs)}.faiss"
    t0 = time.perf_counter()
    if len(vecs) < APPROX_MIN_CHUNKS:  # exact flat index: nothing worth caching
        index = dense_index(vecs)
    elif path.exists():
        index = faiss.read_index(str(path))
    else:
        index = dense_index(vecs)
        tmp = path.with_suffix(".tmp")
        faiss.write_index(index, str(tmp))
        tmp.rename(path)
    seconds = round(time.perf_counter() - t0, 1)
    retriever = HybridRetriever.over(chunks, embedder, InProcessDense(vecs, index), bm25)
    size = path.stat().st_size if path.exists() else vecs.nbytes  # HNSW: graph + vectors; flat: the vectors
    return retriever, seconds, round(size / 1e6, 1)


def _open_collection(url: str, chunks: list[Chunk], vecs: np.ndarray, embedder: Embedder) -> tuple[chroma.ChromaDense, float, float]:
    """The collection as a dense side, built first unless it already holds these vectors; with the seconds
    the build took (0 when cached; to the millisecond, as a small corpus builds in well under 0.1 s) and the
    seconds of the open that succeeded."""
    build_s, t0 = 0.0, time.perf_counter()
    try:
        dense = chroma.open_dense(url, chunks, embedder, verify=False)
    except RagsecError:  # missing, partial or stale: (re)build it, then open it
        from tqdm import tqdm

        bar = tqdm(total=len(chunks), desc=f"chroma upsert {size_label(len(chunks))}", unit="passage", file=sys.stderr)
        t0 = time.perf_counter()
        chroma.build_collection(url, chunks, vecs, embedder.model_id, lambda done, _total: bar.update(done - bar.n))
        bar.close()
        build_s, t0 = round(time.perf_counter() - t0, 3), time.perf_counter()
        dense = chroma.open_dense(url, chunks, embedder, verify=False)
    return dense, build_s, round(time.perf_counter() - t0, 3)


def _digest(vecs: np.ndarray) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(vecs[:: max(1, len(vecs) // 1000)]).tobytes()).hexdigest()[:12]


def default_sizes(sizes: str | None) -> list[int]:
    return [int(s) for s in (sizes or "100000,1000000").split(",")]

