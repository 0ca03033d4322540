"""Planting attack texts into a clean corpus for benchmarks, with exact gold spans.

The clean index is embedded once; each question only re-embeds the few chunks it changes and refits
BM25 (cheap), so a 50-question benchmark does not rebuild a 1,000-passage index 50 times.

Planting is two steps so that a run fanned out over processes draws exactly what a serial run draws:
`plan` makes every seeded choice (the host rows and the sentence boundary in each host) from the run's
one `random.Random`, in question order, on the driver; `apply` builds the planted corpus from a plan and
draws nothing, wherever it runs. `with_poisons` is the two in a row (the serial benchmarks' path).

Three modes: `embedded` (inside a retrieved host), `standalone` (a passage of its own) and `replace` (a
perturbed copy of a clean passage, GARAG's attack, takes that passage's place; its gold is the sentences
that differ from the clean passage, so it may have several spans).
"""

from __future__ import annotations

import difflib
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

from ragsec_core._util.errors import RagsecError
from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.data.corpus import Chunk, Corpus, Document, chunk_document, load_corpus
from ragsec_core.data.spans import Span, sentence_spans
from ragsec_core.rag import build_retriever
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.retrieval.hybrid import HybridRetriever


@dataclass(frozen=True)
class Plant:
    """One poison: its text, and in embedded mode the clean row that hosts it and the offset it goes in
    at (`None`: the host's end, for a one-sentence host); in replace mode the first row of the clean
    passage it replaces. `row` None: a passage of its own. `spans`: its gold in `text` (None: all of it)."""

    text: str
    row: int | None = None
    boundary: int | None = None
    spans: tuple[Span, ...] | None = None

    def gold(self) -> tuple[Span, ...]:
        return ((0, len(self.text)),) if self.spans is None else self.spans


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
    _by_doc: dict[str, list[int]] | None = field(default=None, repr=False)  # doc id -> its rows (replace mode)
    _by_text: dict[tuple[str, ...], list[int]] | None = field(default=None, repr=False)  # its chunks' texts -> rows

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
        seeded boundary in each; standalone and replace planting draw nothing."""
        if mode == "replace":
            return PlantPlan(rec.id, mode, self._replacing(rec, advs))
        if mode != "embedded":
            return PlantPlan(rec.id, mode, tuple(Plant(a) for a in advs))
        hosts = self._hosts(rec.question, len(advs), alpha)
        return PlantPlan(rec.id, mode, tuple(
            Plant(adv, row, draw_boundary(self.base.chunks[row].text, rng)) for row, adv in zip(hosts, advs)))

    def apply(self, plan: PlantPlan) -> tuple[Corpus, HybridRetriever]:
        """The planted corpus and its retriever (embedded: the hosts replaced and re-embedded, BM25 refit;
        standalone: the poisons added; replace: the clean passages' chunks replaced by their copies', and a
        copy whose passage another copy already replaced added as a passage of its own)."""
        extra = [Chunk(f"adv-{plan.rec_id}-{j}", f"adv-{plan.rec_id}-{j}", p.text, 0, len(p.text), "", p.gold())
                 for j, p in enumerate(plan.plants) if p.row is None]
        if plan.mode == "embedded":
            retriever = self.base.with_replaced(
                {p.row: insert(self.base.chunks[p.row], p.text, p.boundary) for p in plan.plants if p.row is not None})
        elif plan.mode == "replace":
            retriever = self.base.with_replaced(
                {r: c for p in plan.plants if p.row is not None for r, c in self._copy_chunks(p).items()})
            retriever = retriever.extended(extra) if extra else retriever
        else:
            retriever = self.base.extended(extra)
        docs = [Document(c.chunk_id, c.text, c.title, c.poison_spans) for c in retriever.chunks]
        return Corpus(f"{self.name}+{plan.rec_id}", docs, source=f"planted:{plan.mode}"), retriever

    def _replacing(self, rec: AttackRecord, advs: list[str]) -> tuple[Plant, ...]:
        """Each copy aimed at the rows of its clean passage (`rec.adv_hosts`, aligned with `advs`), its gold the
        sentences that differ; checked here, on the driver, so a copy that cannot replace fails before any run."""
        if len(rec.adv_hosts) < len(advs):
            raise RagsecError(f"record {rec.id}: replace planting needs the clean passage of each adversarial text "
                              "(RAGDefender's ground_truth)")
        plants, used = [], set()
        for adv, clean in zip(advs, rec.adv_hosts):
            rows = self._rows_of(clean)
            if rows is None:
                raise RagsecError(f"record {rec.id}: its clean passage is not in the corpus, so its copy cannot "
                                  f"replace it: {clean[:80]!r}")
            spans = changed_sentences(clean, adv)
            plant = Plant(adv, None if rows[0] in used else rows[0], spans=spans)
            if plant.row is not None and len(self._copy_chunks(plant)) < len(rows):
                raise RagsecError(f"record {rec.id}: its copy chunks into fewer pieces than its clean passage")
            used.add(rows[0])
            plants.append(plant)
        return tuple(plants)

    def _rows_of(self, text: str) -> list[int] | None:
        """The rows of the clean document whose text is `text` (its chunks, as the corpus chunks it)."""
        if self._by_text is None:
            self._by_text = {tuple(self.base.chunks[r].text for r in rows): rows for rows in self._doc_rows().values()}
        return self._by_text.get(tuple(c.text for c in chunk_document(Document("clean", text))))

    def _doc_rows(self) -> dict[str, list[int]]:
        """Each document's rows in the clean index (built on first use, on the driver and on each worker)."""
        if self._by_doc is None:
            self._by_doc = {}
            for i, c in enumerate(self.base.chunks):
                self._by_doc.setdefault(c.doc_id, []).append(i)
        return self._by_doc

    def _copy_chunks(self, plant: Plant) -> dict[int, Chunk]:
        """The copy chunked as the corpus chunks, piece i in the clean passage's row i (under its chunk id);
        a copy with more pieces than its passage has rows puts the rest in its last row."""
        assert plant.row is not None
        first = self.base.chunks[plant.row]
        rows = self._doc_rows()[first.doc_id]
        pieces = chunk_document(Document(first.doc_id, plant.text, first.title, plant.gold()))
        if len(pieces) > len(rows):
            cut = pieces[len(rows) - 1].start
            rest = Document(first.doc_id, plant.text[cut:], first.title, tuple((a - cut, b - cut) for a, b in plant.gold()))
            tail = chunk_document(rest, max_chars=len(rest.text))[0]
            pieces = pieces[: len(rows) - 1] + [replace(tail, start=cut + tail.start, end=cut + tail.end)]
        return {r: replace(c, chunk_id=self.base.chunks[r].chunk_id) for r, c in zip(rows, pieces)}

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


def changed_sentences(clean: str, copy: str) -> tuple[Span, ...]:
    """GARAG's gold: the sentences of `copy` that are not sentences of `clean` in the same order (a
    sentence-level difflib diff), as spans in `copy`, one per run of consecutive changed sentences: the space
    between two perturbed sentences lies inside the planted region (a typo in every sentence makes the
    whole copy one span)."""
    spans = sentence_spans(copy, limit=len(copy))
    matcher = difflib.SequenceMatcher(None, [clean[a:b] for a, b in sentence_spans(clean, limit=len(clean))],
                                      [copy[a:b] for a, b in spans], autojunk=False)
    same = {j for blk in matcher.get_matching_blocks() for j in range(blk.b, blk.b + blk.size)}
    runs: list[Span] = []
    for j, (a, b) in enumerate(spans):
        if j in same:
            continue
        if runs and j - 1 not in same:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((a, b))
    return tuple(runs)
