"""Remediation: remove traced characters from the corpus, re-index, and ask again.

This closes the forensic loop of the guided demo and the traceback page: if the traced span really
caused the answer, deleting exactly those characters from the source document (not the whole document)
must restore the clean answer. A change traced by reverting it to a trusted snapshot is remediated the
same way: the snapshot's text goes back in its place (`remediation_spans`). Only changed chunks are re-embedded; the rest reuse their vectors, so a
remediation costs one small embedding batch, a BM25 refit and one generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import tokenize
from ragsec_core.data.corpus import (
    Corpus,
    Document,
    chunk_corpus,
    sample_corpus_names,
    variant_names,
)
from ragsec_core.data.spans import merge
from ragsec_core.data.trace import Trace, overlaps
from ragsec_core.models.llm import GenerationSettings
from ragsec_core.rag import Pipeline
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.hybrid import HybridRetriever
from ragsec_core.traceback.boundary import REVERT_PATH
from ragsec_core.traceback.result import SpanRecord, TracebackResult


@dataclass(frozen=True)
class Removal:
    doc_id: str
    start: int  # in the original document text
    end: int
    text: str
    replacement: str = ""  # what goes in its place: the trusted snapshot's text for a reverted change


def remediation_spans(result: TracebackResult) -> list[SpanRecord]:
    """What a remediation removes: each round's reported spans, except that a round traced by reverting to a
    snapshot (`boundary.REVERT_PATH`) gives its reverted changes, each with the snapshot's text: deleting a
    typo-perturbed sentence would delete the answer it garbled."""
    return [s for r in result.rounds for s in (r.causal if r.path == REVERT_PATH else r.attribution)]


def document_removals(trace: Trace, spans: Sequence[SpanRecord]) -> list[Removal]:
    """Map chunk-local spans of a trace to ranges of their source documents."""
    out = []
    for s in spans:
        hit = trace.hits[s.hit]
        a, b = hit.source_start + s.local[0], hit.source_start + s.local[1]
        out.append(Removal(hit.doc_id, a, b, hit.text[s.local[0] : s.local[1]], s.replacement or ""))
    return out


def _cut(doc: Document, edits: list[tuple[int, int, str]]) -> Document:
    """The document with each range of `edits` replaced by its text (removed when ""); gold poison spans are
    shifted (or clipped) to stay aligned."""
    text, keep, pos = doc.text, [], 0
    for a, b, new in edits:
        keep += [text[pos:a], new]
        pos = b
    keep.append(text[pos:])

    def shift(x: int) -> int:
        return x - sum(min(b, x) - a for a, b, _ in edits if a < x) + sum(len(new) for a, _, new in edits if a < x)

    spans = tuple((shift(a), shift(b)) for a, b in doc.poison_spans if shift(b) > shift(a))
    return replace(doc, text="".join(keep), poison_spans=spans)


def remediated_corpus(corpus: Corpus, removals: Sequence[Removal]) -> Corpus:
    by_doc: dict[str, list[tuple[int, int, str]]] = {}
    for r in removals:
        by_doc.setdefault(r.doc_id, []).append((r.start, r.end, r.replacement))
    docs = {d.id: d for d in corpus.documents}
    missing = sorted(set(by_doc) - set(docs))
    if missing:
        raise RagsecError(f"documents {missing} are not in corpus '{corpus.name}': was the trace made on another corpus?")
    for doc_id, ranges in by_doc.items():
        d = docs[doc_id]
        if any(b > len(d.text) for _, b, _ in ranges):
            raise RagsecError(f"a traced span lies outside document '{doc_id}': the corpus changed since the trace")
    new_docs = [_cut(d, _edits(by_doc[d.id])) if d.id in by_doc else d for d in corpus.documents]
    return replace(corpus, documents=new_docs, name=f"{corpus.name} (remediated)")


def _edits(ranges: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """One document's edits in order: plain removals merged (overlapping spans are one cut); a replacement
    that overlaps an earlier edit is dropped (a revert's changes never overlap)."""
    plain = [(a, b, "") for a, b in merge((a, b) for a, b, new in ranges if not new)]
    out: list[tuple[int, int, str]] = []
    for a, b, new in sorted(plain + [r for r in ranges if r[2]]):
        if not out or a >= out[-1][1]:
            out.append((a, b, new))
    return out


def reindexed(retriever: HybridRetriever, corpus: Corpus) -> HybridRetriever:
    """An in-process retriever over `corpus`, re-embedding only chunks whose text changed. Not persisted."""
    chunks = chunk_corpus(corpus)
    known = {(c.chunk_id, c.text): i for i, c in enumerate(retriever.chunks)}
    rows = [known.get((c.chunk_id, c.text)) for c in chunks]
    fresh = [i for i, r in enumerate(rows) if r is None]
    emb = np.empty((len(chunks), retriever.dense.dim), dtype=np.float32)
    kept = [i for i, r in enumerate(rows) if r is not None]
    if kept:  # one fetch, also from a remote store; the remediated corpus then lives in-process
        emb[kept] = retriever.dense.vectors(np.array([rows[i] for i in kept]))
    if fresh:
        emb[fresh] = retriever.embedder.embed([chunks[i].text for i in fresh])
    return HybridRetriever(chunks, retriever.embedder, emb, BM25().fit([tokenize(c.text) for c in chunks]))


def sample_origin(trace: Trace) -> tuple[str, str | None] | None:
    """(sample corpus, variant) a trace was made on, when it names a shipped sample corpus ("secops+embedded");
    the caller must still compare content hashes, since the sample files may have changed since."""
    name, _, variant = str(trace.retrieval.get("corpus", "")).partition("+")
    if name not in sample_corpus_names() or (variant and variant not in variant_names(name)):
        return None
    return name, variant or None


@dataclass
class Remediation:
    removals: list[Removal]
    pipeline: Pipeline
    before: Trace
    after: Trace

    @property
    def restored(self) -> bool:
        """The event is gone: the new answer no longer repeats the traced answer, and is correct (and not
        the attacker's target) when the query carries labels."""
        after, labels = self.after.answer, self.after.labels
        if overlaps(after, self.before.answer):
            return False
        if labels.target and overlaps(after, labels.target):
            return False
        return bool(self.after.signals.correct) if labels.answers else True


def remediate(pipeline: Pipeline, trace: Trace, spans: Sequence[SpanRecord]) -> Remediation:
    """Delete `spans` from their documents, re-index, and re-ask the trace's query with its settings."""
    if not spans:
        raise RagsecError("nothing to remove: the traceback found no span")
    removals = document_removals(trace, spans)
    corpus = remediated_corpus(pipeline.corpus, removals)
    fixed = Pipeline(corpus, reindexed(pipeline.retriever, corpus), pipeline.llm)
    r = trace.retrieval
    after = fixed.ask(trace.query, k=int(r["k"]), alpha=trace.search_alpha(), use=int(r["use"]),
                      labels=trace.labels, settings=GenerationSettings(**trace.model["settings"]))
    return Remediation(removals, fixed, trace, after)
