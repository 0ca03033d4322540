"""Planting attack texts into a clean corpus for benchmarks, with exact gold spans.

The clean index is embedded once; each question only re-embeds the few chunks it changes and refits
BM25 (cheap), so a 50-question benchmark does not rebuild a 1,000-passage index 50 times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import tokenize
from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.data.corpus import Chunk, Corpus, Document, chunk_corpus, load_corpus
from ragsec_core.data.spans import sentence_spans
from ragsec_core.rag import index_cache
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.retrieval.hybrid import HybridRetriever


@dataclass
class PlantedCorpus:
    name: str
    base: HybridRetriever

    @classmethod
    def build(cls, records: list[AttackRecord], corpus: str | Path | None, embedder: Embedder) -> PlantedCorpus:
        if corpus:
            clean = load_corpus(corpus)
        else:
            seen: dict[str, Document] = {}
            for r in records:
                for title, text in r.context:
                    if text.strip() and text not in seen:
                        seen[text] = Document(f"ctx-{len(seen)}", text, title)
            if not seen:
                raise RagsecError("the attack file has no 'context' passages: pass a clean corpus with --corpus")
            clean = Corpus("attack-context", list(seen.values()))
        base = HybridRetriever.build(chunk_corpus(clean), embedder, cache_root=index_cache())
        return cls(clean.name, base)

    def with_poisons(
        self, rec: AttackRecord, advs: list[str], mode: str, alpha: float, rng: random.Random
    ) -> tuple[Corpus, HybridRetriever]:
        if mode == "embedded":
            chunks = list(self.base.chunks)
            emb = self.base.embeddings.copy()
            hosts = self._hosts(rec.question, len(advs), alpha)
            for idx, adv in zip(hosts, advs):
                chunks[idx] = plant(chunks[idx], adv, rng)
            emb[hosts] = self.base.embedder.embed([chunks[i].text for i in hosts])
            retriever = HybridRetriever(chunks, self.base.embedder, emb, BM25().fit([tokenize(c.text) for c in chunks]))
        else:
            extra = [Chunk(f"adv-{rec.id}-{j}", f"adv-{rec.id}-{j}", a, 0, len(a), "", ((0, len(a)),)) for j, a in enumerate(advs)]
            retriever = self.base.extended(extra)
        docs = [Document(c.chunk_id, c.text, c.title, c.poison_spans) for c in retriever.chunks]
        return Corpus(f"{self.name}+{rec.id}", docs, source=f"planted:{mode}"), retriever

    def _hosts(self, question: str, n: int, alpha: float) -> list[int]:
        """The best-ranked clean chunks for the question, one host per poison."""
        ids = {c.chunk_id: i for i, c in enumerate(self.base.chunks)}
        hits = self.base.search(question, k=max(n, 1), alpha=alpha)
        return [ids[h.chunk.chunk_id] for h in hits][:n]


def plant(host: Chunk, adv: str, rng: random.Random) -> Chunk:
    """Insert `adv` at a seeded sentence boundary inside the host (its end if it has one sentence)."""
    text = host.text
    starts = [s for s, _ in sentence_spans(text)[1:]]
    if starts:
        b = rng.choice(starts)
        new = text[:b] + adv + " " + text[b:]
        gold = (b, b + len(adv))
    else:
        new = text + " " + adv
        gold = (len(text) + 1, len(new))
    assert new[gold[0] : gold[1]] == adv
    return replace(host, text=new, end=host.start + len(new), poison_spans=(gold,))
