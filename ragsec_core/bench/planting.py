"""Planting attack texts into a clean corpus for benchmarks, with exact gold spans.

The clean index is embedded once; each question only re-embeds the few chunks it changes and refits
BM25 (cheap), so a 50-question benchmark does not rebuild a 1,000-passage index 50 times.

Planting is two steps so that a run fanned out over processes draws exactly what a serial run draws:
`plan` makes every seeded choice (the host rows and the sentence boundary in each host) from the run's
one `random.Random`, in question order, on the driver; `apply` builds the planted corpus from a plan and
draws nothing, wherever it runs. `with_poisons` is the two in a row (the serial benchmarks' path).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

from ragsec_core._util.errors import RagsecError
from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.data.corpus import Chunk, Corpus, Document, load_corpus
from ragsec_core.data.spans import sentence_spans
from ragsec_core.rag import build_retriever
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.retrieval.hybrid import HybridRetriever


@dataclass(frozen=True)
class Plant:
    """One poison: its text, and in embedded mode the clean row that hosts it and the offset it goes in
    at (`None`: the host's end, for a one-sentence host)."""

    text: str
    row: int | None = None
    boundary: int | None = None


@dataclass(frozen=True)
class PlantPlan:
    """Every seeded choice of one question's planting: `apply` turns it into the same corpus anywhere."""

    rec_id: str
    mode: str
    plants: tuple[Plant, ...]


def clean_corpus(records: list[AttackRecord], corpus: str | Path | None) -> Corpus:
    """The clean corpus of a benchmark: `corpus` when given, else the records' context passages."""
    if corpus:
        return load_corpus(corpus)
    seen: dict[str, Document] = {}
    for r in records:
        for title, text in r.context:
            if text.strip() and text not in seen:
                seen[text] = Document(f"ctx-{len(seen)}", text, title)
    if not seen:
        raise RagsecError("the attack file has no 'context' passages: pass a clean corpus with --corpus")
    return Corpus("attack-context", list(seen.values()))


@dataclass
class PlantedCorpus:
    name: str
    base: HybridRetriever

    @classmethod
    def build(cls, records: list[AttackRecord], corpus: str | Path | None, embedder: Embedder) -> PlantedCorpus:
        return cls.from_corpus(clean_corpus(records, corpus), embedder)

    @classmethod
    def from_corpus(cls, clean: Corpus, embedder: Embedder, index: str | None = None, build_index: bool = False) -> PlantedCorpus:
        """The clean index (persisted in the index cache, so every process of a run loads the same one), or
        a Chroma collection as its dense side (`--index`): planting then goes into an in-process overlay."""
        return cls(clean.name, build_retriever(clean, embedder, index=index, build_index=build_index))

    def with_poisons(
        self, rec: AttackRecord, advs: list[str], mode: str, alpha: float, rng: random.Random
    ) -> tuple[Corpus, HybridRetriever]:
        return self.apply(self.plan(rec, advs, mode, alpha, rng))

    def plan(self, rec: AttackRecord, advs: list[str], mode: str, alpha: float, rng: random.Random) -> PlantPlan:
        """The hosts (embedded mode: the best-ranked clean chunks for the question, one per poison) and a
        seeded boundary in each; standalone planting draws nothing."""
        if mode != "embedded":
            return PlantPlan(rec.id, mode, tuple(Plant(a) for a in advs))
        hosts = self._hosts(rec.question, len(advs), alpha)
        return PlantPlan(rec.id, mode, tuple(
            Plant(adv, row, draw_boundary(self.base.chunks[row].text, rng)) for row, adv in zip(hosts, advs)))

    def apply(self, plan: PlantPlan) -> tuple[Corpus, HybridRetriever]:
        """The planted corpus and its retriever (embedded: the hosts replaced and re-embedded, BM25 refit;
        standalone: the poisons added)."""
        if plan.mode == "embedded":
            retriever = self.base.with_replaced(
                {p.row: insert(self.base.chunks[p.row], p.text, p.boundary) for p in plan.plants if p.row is not None})
        else:
            extra = [Chunk(f"adv-{plan.rec_id}-{j}", f"adv-{plan.rec_id}-{j}", p.text, 0, len(p.text), "", ((0, len(p.text)),))
                     for j, p in enumerate(plan.plants)]
            retriever = self.base.extended(extra)
        docs = [Document(c.chunk_id, c.text, c.title, c.poison_spans) for c in retriever.chunks]
        return Corpus(f"{self.name}+{plan.rec_id}", docs, source=f"planted:{plan.mode}"), retriever

    def _hosts(self, question: str, n: int, alpha: float) -> list[int]:
        """The best-ranked clean chunks for the question, one host per poison."""
        ids = {c.chunk_id: i for i, c in enumerate(self.base.chunks)}
        hits = self.base.search(question, k=max(n, 1), alpha=alpha)
        return [ids[h.chunk.chunk_id] for h in hits][:n]


def plant(host: Chunk, adv: str, rng: random.Random) -> Chunk:
    """Insert `adv` at a seeded sentence boundary inside the host (its end if it has one sentence)."""
    return insert(host, adv, draw_boundary(host.text, rng))


def draw_boundary(text: str, rng: random.Random) -> int | None:
    """A seeded sentence start after the first sentence; `None` (and no draw) for one sentence."""
    starts = [s for s, _ in sentence_spans(text)[1:]]
    return rng.choice(starts) if starts else None


def insert(host: Chunk, adv: str, boundary: int | None) -> Chunk:
    """The host with `adv` inserted at `boundary` (`None`: appended), its gold span exact."""
    text = host.text
    if boundary is not None:
        new = text[:boundary] + adv + " " + text[boundary:]
        gold = (boundary, boundary + len(adv))
    else:
        new = text + " " + adv
        gold = (len(text) + 1, len(new))
    assert new[gold[0] : gold[1]] == adv
    return replace(host, text=new, end=host.start + len(new), poison_spans=(gold,))
