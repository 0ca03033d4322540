import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import tokenize
from ragsec_core.data.corpus import chunk_corpus, load_corpus
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.hybrid import HybridRetriever

QUERIES = ["What port does SSH use by default?", "How long are firewall logs retained?", "phishing triage steps"]


@pytest.fixture(scope="module")
def secops(pipeline):
    return pipeline("secops").retriever


def test_bm25_scores_equal_rank_bm25():
    chunks = chunk_corpus(load_corpus("secops"))
    toks = [tokenize(c.text) for c in chunks]
    ours, ref = BM25().fit(toks), BM25Okapi(toks)
    for q in QUERIES + ["zzz-unknown-term"]:
        np.testing.assert_allclose(ours.scores(q), ref.get_scores(tokenize(q)), rtol=1e-9, atol=1e-9)


def _full_ranking(scores: np.ndarray) -> list[int]:
    return list(np.lexsort((np.arange(len(scores)), -scores)))


@pytest.mark.parametrize("query", QUERIES)
def test_hybrid_extremes_equal_pure_rankings(secops, query):
    k = 10
    ids = {c.chunk_id: i for i, c in enumerate(secops.chunks)}
    q = secops.embedder.embed([query])[0]
    dense_rank = _full_ranking(secops.embeddings @ q)[:k]
    bm25_rank = _full_ranking(secops.bm25.scores(query))[:k]
    at1 = [ids[h.chunk.chunk_id] for h in secops.search(query, k=k, alpha=1.0)]
    at0 = [ids[h.chunk.chunk_id] for h in secops.search(query, k=k, alpha=0.0)]
    assert at1 == dense_rank
    assert at0 == bm25_rank
    assert at1 != at0  # the two retrievers genuinely disagree on these queries


def test_hits_keep_every_component_score(secops):
    hits = secops.search(QUERIES[0], k=5, alpha=0.3)
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    for h in hits:
        assert h.hybrid == pytest.approx(0.3 * h.dense_norm + 0.7 * h.bm25_norm)
        assert 0 <= h.bm25_norm <= 1 and 0 <= h.dense_norm <= 1
    assert [h.hybrid for h in hits] == sorted((h.hybrid for h in hits), reverse=True)
    assert "22" in hits[0].chunk.text or "22" in hits[1].chunk.text


class CountingEmbedder:
    """Delegates to the real MiniLM and counts how many texts it embedded."""

    def __init__(self, real):
        self.real, self.model_id, self.count = real, real.model_id, 0

    def embed(self, texts, **kw):
        self.count += len(texts)
        return self.real.embed(texts, **kw)


def test_index_persists_and_reloads_without_recomputation(tmp_path, embedder):
    chunks = chunk_corpus(load_corpus("secops"))[:40]
    spy = CountingEmbedder(embedder)
    first = HybridRetriever.build(chunks, spy, cache_root=tmp_path)
    assert spy.count == 40
    second = HybridRetriever.build(chunks, spy, cache_root=tmp_path)
    assert spy.count == 40  # nothing re-embedded
    np.testing.assert_array_equal(first.embeddings, second.embeddings)
    changed = chunks[:39]
    HybridRetriever.build(changed, spy, cache_root=tmp_path)
    assert spy.count == 79  # a changed corpus gets a new index


@pytest.mark.parametrize("k, alpha", [(0, 0.5), (-1, 0.5), (5, 1.5), (5, -0.1)])
def test_bad_search_parameters(secops, k, alpha):
    with pytest.raises(RagsecError):
        secops.search("x", k=k, alpha=alpha)


def test_single_text_fast_path_equals_the_transformers_forward(embedder):
    """Queries (one text) take the plain-tensor encoder; batches take transformers'. Same vectors."""
    import numpy as np

    texts = ["capital of Peru", "", "Qui a écrit « Le Petit Prince » ? 東京 🙂", "word " * 400]
    batched = embedder.embed(texts + ["pad the batch so padding masks are exercised " * 3])[: len(texts)]
    for text, ref in zip(texts, batched):
        single = embedder.embed([text])[0]
        assert np.abs(single - ref).max() < 1e-5 and abs(float(np.linalg.norm(single)) - 1) < 1e-5
    assert embedder._single  # the default MiniLM is supported, so the comparison above used the fast path
