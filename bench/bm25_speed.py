"""BM25: rank-bm25 (design card) vs ragsec's sparse-matrix BM25Okapi, same scores, side by side.

Run: .venv/bin/python bench/bm25_speed.py [--docs 20000]
Prints per-query latency of both, the speed ratio, and the largest score difference.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from rank_bm25 import BM25Okapi

from ragsec_core._util.text import tokenize
from ragsec_core.data.corpus import load_corpus
from ragsec_core.retrieval.bm25 import BM25


def synthetic_corpus(n: int, seed: int = 0) -> list[list[str]]:
    """n documents resampled from the sample corpora's sentences (realistic vocabulary and lengths)."""
    rng = random.Random(seed)
    sents = [s for name in ("general", "secops") for d in load_corpus(name).documents for s in d.text.split(". ")]
    return [tokenize(" ".join(rng.sample(sents, 3))) for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    docs = synthetic_corpus(args.docs)
    rng = random.Random(1)
    queries = [" ".join(rng.sample(docs[rng.randrange(len(docs))], 4)) for _ in range(args.queries)]
    t = time.perf_counter()
    ref = BM25Okapi(docs)
    ref_build = time.perf_counter() - t
    t = time.perf_counter()
    ours = BM25().fit(docs)
    our_build = time.perf_counter() - t
    t = time.perf_counter()
    ref_scores = [ref.get_scores(tokenize(q)) for q in queries]
    ref_q = (time.perf_counter() - t) / len(queries)
    t = time.perf_counter()
    our_scores = [ours.scores(q) for q in queries]
    our_q = (time.perf_counter() - t) / len(queries)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(ref_scores, our_scores))
    same_top10 = all(
        list(np.lexsort((np.arange(len(a)), -a))[:10]) == list(np.lexsort((np.arange(len(b)), -b))[:10])
        for a, b in zip(ref_scores, our_scores)
    )
    print(f"docs={args.docs} queries={args.queries}")
    print(f"build   rank-bm25 {ref_build:7.2f} s   ragsec {our_build:7.2f} s")
    print(f"query   rank-bm25 {ref_q * 1000:7.2f} ms  ragsec {our_q * 1000:7.3f} ms  speed-up x{ref_q / our_q:.0f}")
    print(f"max |score difference| = {diff:.2e}; identical top-10 for every query: {same_top10}")


if __name__ == "__main__":
    main()
