"""Sections of `ragsec bench speed` other than Pass-1: start-up, retrieval at 20k/100k, attention capture.

Each comparison runs its contenders on the same inputs, interleaved, so a load spike on the shared
cores hits all of them alike; results are latencies, ratios and equality/recall checks.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ragsec_core._util.text import tokenize
from ragsec_core.bench import speed_corpus as sc
from ragsec_core.data.corpus import Chunk, load_corpus
from ragsec_core.models.attention import generate_with_attention
from ragsec_core.models.llm import GenerationSettings, load_llm
from ragsec_core.rag import render_prompt
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.dense import InProcessDense
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.retrieval.hybrid import HybridRetriever

STARTUP_SNIPPET = """
import json, time
t0 = time.perf_counter()
from ragsec_core.models.llm import GenerationSettings, load_llm
t1 = time.perf_counter()
llm = load_llm()
t2 = time.perf_counter()
llm.generate("Hello", GenerationSettings(max_new_tokens=1))
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "first_token_s": t3 - t2}))
"""


# ---------------------------------------------------------------- start-up

def startup(runs: int = 2) -> dict[str, Any]:
    """Fresh interpreters loading the default model and producing one token. The first run makes sure
    the dequantised cache exists (and warms the page cache); the later ones are 'second starts'."""
    import resource

    walls, cpus, parts = [], [], []
    for _ in range(runs + 1):
        t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", STARTUP_SNIPPET], capture_output=True, text=True, timeout=900)
        walls.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if out.returncode != 0:
            return {"startup_error": out.stderr[-500:]}
        parts.append(json.loads(out.stdout.strip().splitlines()[-1]))
    later = walls[1:]
    best = int(np.argmin(later)) + 1
    return {
        "second_start_s": round(statistics.median(later), 2),  # process spawn -> first token
        "second_start_min_s": round(min(later), 2),
        # CPU seconds of the child: what the wall time would be on an otherwise idle core
        "second_start_cpu_s": round(statistics.median(cpus[1:]), 2),
        "second_start_import_s": round(parts[best]["import_s"], 2),
        "second_start_load_s": round(parts[best]["load_s"], 2),
        "second_start_first_token_s": round(parts[best]["first_token_s"], 2),
        "first_start_s": round(walls[0], 2),
    }


# ---------------------------------------------------------------- retrieval

def retrieval(sizes: list[int], n_queries: int, quick: bool, hybrid_only: bool = False) -> dict[str, Any]:
    if why := sc.shared_missing():
        return {"retrieval_skipped": why}

    embedder = Embedder()
    corpus = sc.speed_corpus(max(sizes))
    texts = corpus.texts
    tokens = [tokenize(t) for t in texts]
    queries = sc.queries(n_queries)
    out: dict[str, Any] = {"retrieval_passages": len(texts), "retrieval_queries": len(queries)}
    for n in [] if hybrid_only else sizes:
        rank_queries = queries if n <= 20000 or not quick else queries[:5]
        out |= bm25_compare(tokens[:n], queries, rank_queries, n)
    vecs = corpus.vectors(sc.cached_embeddings(corpus.sentences, embedder))
    qv = embedder.embed(queries)
    if not hybrid_only:
        out |= dense_compare(vecs, qv)
    out |= hybrid_latency(texts, tokens, vecs, embedder, queries)
    return out


def bm25_compare(docs: list[list[str]], queries: list[str], rank_queries: list[str], n: int) -> dict[str, Any]:
    """ragsec's BM25 vs rank-bm25 (reference scores) vs bm25s (Robertson idf, our tokens): build and
    query time, and whether each query's top-10 (ties by index) equals rank-bm25's."""
    from rank_bm25 import BM25Okapi


    k = f"_{n // 1000}k"
    res: dict[str, Any] = {}
    t = time.perf_counter()
    ours = BM25().fit(docs)
    res["bm25_ours_index_s" + k] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    ref = BM25Okapi(docs)
    res["bm25_rank_bm25_index_s" + k] = round(time.perf_counter() - t, 2)
    s25 = _bm25s_index(docs)
    if isinstance(s25, str):
        res["bm25s" + k] = s25
    else:
        res["bm25s_index_s" + k] = round(s25[1], 2)
    times: dict[str, list[float]] = {"ours": [], "rank": [], "bm25s": []}
    same_ours = same_s = 0
    for q in rank_queries:
        toks = tokenize(q)
        a, ta = timed(lambda: ours.scores(q))
        b, tb = timed(lambda: ref.get_scores(toks))
        times["ours"].append(ta)
        times["rank"].append(tb)
        top = _top10(b)
        same_ours += _top10(a) == top
        if not isinstance(s25, str):
            c, tc = timed(lambda: s25[0].get_scores(toks))
            times["bm25s"].append(tc)
            same_s += _top10(np.asarray(c, dtype=np.float64)) == top
    for q in queries[len(rank_queries):]:  # extra queries for our latency only
        times["ours"].append(timed(lambda: ours.scores(q))[1])
    res["bm25_ours_query_ms" + k] = round(statistics.median(times["ours"]), 3)
    res["bm25_rank_bm25_query_ms" + k] = round(statistics.median(times["rank"]), 2)
    res["bm25_ours_speedup_vs_rank_bm25" + k] = round(res["bm25_rank_bm25_query_ms" + k] / res["bm25_ours_query_ms" + k], 1)
    res["bm25_ours_top10_equal" + k] = f"{same_ours}/{len(rank_queries)}"
    if times["bm25s"]:
        res["bm25s_query_ms" + k] = round(statistics.median(times["bm25s"]), 3)
        res["bm25s_top10_equal" + k] = f"{same_s}/{len(rank_queries)}"
    return res


def _bm25s_index(docs: list[list[str]]) -> tuple[Any, float] | str:
    try:
        import bm25s
    except ImportError:
        return "not installed"
    t = time.perf_counter()
    model = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
    model.index(docs, show_progress=False)
    return model, time.perf_counter() - t


def dense_compare(vecs: np.ndarray, qv: np.ndarray) -> dict[str, Any]:
    """FAISS exact inner product vs HNSW at the full size: build time, single-query latency, recall@10."""
    import faiss

    flat = faiss.IndexFlatIP(vecs.shape[1])
    t = time.perf_counter()
    flat.add(vecs)
    res: dict[str, Any] = {"dense_n": len(vecs), "dense_flat_build_s": round(time.perf_counter() - t, 2)}
    t = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(vecs.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 80
    hnsw.add(vecs)
    res["dense_hnsw_build_s"] = round(time.perf_counter() - t, 1)
    for ef in (64, 256):
        hnsw.hnsw.efSearch = ef
        tf, th, rec = [], [], []
        for q in qv:
            (_, a), ta = timed(lambda: flat.search(q[None, :], 10))
            (_, b), tb = timed(lambda: hnsw.search(q[None, :], 10))
            tf.append(ta)
            th.append(tb)
            rec.append(len(set(a[0]) & set(b[0])) / 10)
        res[f"dense_hnsw_ef{ef}_recall10"] = round(float(np.mean(rec)), 4)
        res[f"dense_hnsw_ef{ef}_query_ms"] = round(statistics.median(th), 3)
    res["dense_flat_query_ms"] = round(statistics.median(tf), 3)
    return res


def hybrid_latency(texts: list[str], tokens: list[list[str]], vecs: np.ndarray, embedder: Any, queries: list[str]) -> dict[str, Any]:
    """`HybridRetriever.search` at the full size, including the MiniLM query embedding, with the dense
    index the retriever picks at this size (HNSW from 50k) and with exact flat search, interleaved:
    p50/p95, where the time goes, and how often the top-5 agrees."""
    import faiss


    chunks = [Chunk(f"p{i}#0", f"p{i}", t, 0, len(t)) for i, t in enumerate(texts)]
    t0 = time.perf_counter()
    retriever = HybridRetriever(chunks, embedder, vecs, BM25().fit(tokens))
    build_s = time.perf_counter() - t0
    dense = cast(InProcessDense, retriever.dense)
    flat = faiss.IndexFlatIP(vecs.shape[1])
    flat.add(vecs)
    chosen = dense.index
    for q in queries[:3]:
        retriever.search(q, k=5, alpha=0.5)  # warm-up
    total: dict[str, list[float]] = {"chosen": [], "flat": []}
    emb, sparse, same = [], [], 0
    for q in queries:
        tops = {}
        for name, index in (("chosen", chosen), ("flat", flat)):
            dense.index = index
            hits, ms = timed(lambda: retriever.search(q, k=5, alpha=0.5))
            total[name].append(ms)
            tops[name] = [h.chunk.chunk_id for h in hits]
        same += tops["chosen"] == tops["flat"]
        emb.append(timed(lambda: embedder.embed([q])[0])[1])
        sparse.append(timed(lambda: retriever.bm25.scores(q))[1])
    dense.index = chosen
    n = len(texts) // 1000
    return {
        f"hybrid_index_{n}k": type(chosen).__name__,
        f"hybrid_build_s_{n}k": round(build_s, 1),
        f"hybrid_p50_ms_{n}k": round(statistics.median(total["chosen"]), 2),
        f"hybrid_p95_ms_{n}k": round(float(np.percentile(total["chosen"], 95)), 2),
        f"hybrid_flat_p50_ms_{n}k": round(statistics.median(total["flat"]), 2),
        f"hybrid_flat_p95_ms_{n}k": round(float(np.percentile(total["flat"], 95)), 2),
        f"hybrid_top5_same_as_flat_{n}k": f"{same}/{len(queries)}",
        f"hybrid_query_embed_ms_{n}k": round(statistics.median(emb), 2),
        f"hybrid_bm25_ms_{n}k": round(statistics.median(sparse), 2),
    }


def _top10(scores: np.ndarray) -> list[int]:
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -np.asarray(scores)))[:10]]


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t) * 1000


# ---------------------------------------------------------------- attention capture

class PeakRSS:
    """Samples this process's resident memory every 5 ms; `peak_mb` is the growth over the start."""

    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            self._stop.wait(0.005)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)

    @property
    def peak_mb(self) -> float:
        return (self.peak - self.base) / 2**20


def attention(lengths: list[int], repeats: int = 2, new_tokens: int = 16) -> dict[str, Any]:
    """Plain greedy generation vs hook capture (answer rows only) vs `output_attentions=True` full
    stacks, on real-text prompts of about `lengths` tokens: time and peak RSS growth."""
    import gc

    import torch


    llm = load_llm()
    settings = GenerationSettings(max_new_tokens=new_tokens)
    ids_of = {n: _prompt_ids(llm, n) for n in lengths}

    def plain(ids: torch.Tensor) -> Any:
        with torch.no_grad():
            return llm.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens, do_sample=False,
                                      pad_token_id=llm.tokenizer.eos_token_id)

    def full(ids: torch.Tensor) -> Any:
        with torch.no_grad():
            out = llm.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens, do_sample=False,
                                     pad_token_id=llm.tokenizer.eos_token_id, output_attentions=True,
                                     return_dict_in_generate=True)
        return len(out.attentions)

    res: dict[str, Any] = {"attention_new_tokens": new_tokens, "attention_max_new_tokens_setting": settings.max_new_tokens}
    for n, (ids, prompt) in ids_of.items():
        modes: dict[str, Callable[[], Any]] = {
            "plain": lambda: plain(ids),
            "hooks": lambda: generate_with_attention(llm, prompt, max_new_tokens=new_tokens),
            "full": lambda: full(ids),
        }
        if n == lengths[0]:
            plain(ids)  # warm-up: the process's first-call allocations are not what we measure
        times: dict[str, list[float]] = {m: [] for m in modes}
        peaks: dict[str, float] = {m: 0.0 for m in modes}
        for r in range(repeats if n <= 1000 else 1):  # long prompts: one round (minutes on shared cores)
            order = list(modes) if r % 2 == 0 else list(reversed(modes))
            for m in order:
                gc.collect()
                with PeakRSS() as mem:
                    _, ms = timed(modes[m])
                times[m].append(ms / 1000)
                peaks[m] = max(peaks[m], mem.peak_mb)
        t = {m: min(v) for m, v in times.items()}
        res |= {
            f"attention_tokens_{n}": int(ids.shape[1]),
            f"attention_plain_s_{n}": round(t["plain"], 2),
            f"attention_hooks_s_{n}": round(t["hooks"], 2),
            f"attention_full_s_{n}": round(t["full"], 2),
            f"attention_overhead_{n}": round(t["hooks"] / t["plain"], 3),
            f"attention_full_overhead_{n}": round(t["full"] / t["plain"], 3),
            f"attention_plain_peak_mb_{n}": round(peaks["plain"], 1),
            f"attention_hooks_peak_mb_{n}": round(peaks["hooks"], 1),
            f"attention_full_peak_mb_{n}": round(peaks["full"], 1),
        }
    res["attention_overhead"] = max(res[f"attention_overhead_{n}"] for n in lengths)  # worst length
    return res


def _prompt_ids(llm: Any, n_tokens: int) -> tuple[Any, str]:
    """A rendered chat prompt of at least `n_tokens` tokens: sample-corpus passages as numbered contexts."""
    docs = [d.text for name in ("general", "secops") for d in load_corpus(name).documents]
    texts: list[str] = []
    while True:
        texts.append(docs[len(texts) % len(docs)])
        prompt = render_prompt(llm, "What does the first context say?", texts).prompt
        ids = llm.encode(prompt)
        if ids.shape[1] >= n_tokens:
            return ids, prompt
