"""Pass-0 (RAGCharacter §4.2, Algorithm 1): a normal RAG run that logs a prompt-anchored trace.

The trace keeps the exact rendered prompt and, for every prompt-used chunk, its offsets [a, e) in that
prompt, so any later span can be stated in chunk and prompt coordinates and replayed verbatim.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import check_params, check_query
from ragsec_core._util.paths import cache_dir
from ragsec_core._util.text import tokenize
from ragsec_core.data.corpus import Chunk, Corpus, chunk_corpus
from ragsec_core.data.trace import Labels, PromptSpan, Trace, TraceHit, compute_signals, new_trace_id, now_iso
from ragsec_core.models.endpoint import EndpointLLM
from ragsec_core.models.llm import LLM, GenerationSettings
from ragsec_core.retrieval import chroma
from ragsec_core.retrieval.bm25 import BM25
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.retrieval.hybrid import Hit, HybridRetriever

SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the user's question using the numbered contexts. "
    "Reply with a short answer of a few words. If the contexts do not contain the answer, "
    'reply "I don\'t know".'
)


@dataclass(frozen=True)
class RenderedPrompt:
    prompt: str
    spans: list[tuple[int, int]]  # per used hit, offsets of its text in `prompt`


def render_prompt(llm: LLM | EndpointLLM, query: str, texts: list[str], system: str = SYSTEM_PROMPT) -> RenderedPrompt:
    """Place each context verbatim in the user turn and record where it lands in the final prompt."""
    parts = ["Contexts:\n"]
    local: list[tuple[int, int]] = []
    pos = len(parts[0])
    for j, text in enumerate(texts, 1):
        label = f"[{j}] "
        start = pos + len(label)
        parts.append(f"{label}{text}\n")
        local.append((start, start + len(text)))
        pos += len(label) + len(text) + 1
    parts.append(f"\nQuestion: {query}\nAnswer:")
    user = "".join(parts)
    prompt = llm.render_chat(system, user)
    base = prompt.find(user)
    if base < 0:
        raise RagsecError("the chat template altered the contexts; cannot anchor prompt offsets")
    spans = [(base + a, base + e) for a, e in local]
    assert all(prompt[a:e] == t for (a, e), t in zip(spans, texts))
    return RenderedPrompt(prompt, spans)


class Pipeline:
    """Corpus + retriever + generator: one `ask` produces one Pass-0 trace."""

    def __init__(self, corpus: Corpus, retriever: HybridRetriever, llm: LLM | EndpointLLM) -> None:
        self.corpus = corpus
        self.retriever = retriever
        self.llm = llm

    @property
    def chunks(self) -> list[Chunk]:
        return self.retriever.chunks

    def ask(
        self,
        query: str,
        k: int = 5,
        alpha: float = 0.5,
        use: int | None = None,
        labels: Labels | None = None,
        settings: GenerationSettings | None = None,
    ) -> Trace:
        """Retrieve, render and generate once, logging the Pass-0 trace.

        The user's query, `k` and `alpha` are validated here, once per request; the retriever is then
        called on its unchecked path, so a bad value fails with the same message at one place."""
        query = check_query(query)
        check_params(k, alpha)
        settings = settings or GenerationSettings()
        t0 = time.perf_counter()
        hits = self.retriever.search_unchecked(query, k, alpha)
        t1 = time.perf_counter()
        used = list(range(min(len(hits), use or k)))  # H_U = TopU(H)
        rendered = render_prompt(self.llm, query, [hits[i].chunk.text for i in used])
        messages, anchor = self._messages(rendered.prompt)
        if isinstance(self.llm, EndpointLLM):
            gen = self.llm.generate(rendered.prompt, settings, messages or None)
        else:
            gen = self.llm.generate(rendered.prompt, settings)
        labels = labels or self.default_labels(query)
        signals = compute_signals(gen.text, {i: hits[i].chunk.text for i in used}, labels)
        return Trace(
            trace_id=new_trace_id(),
            created_at=now_iso(),
            query=query,
            model=self.model_record(settings),
            retrieval={
                "corpus": self.corpus.name,
                "corpus_source": self.corpus.source,
                "corpus_hash": self.corpus.content_hash(),
                "embedder": self.retriever.embedder.model_id,
                "k": k,
                "alpha": alpha,
                "use": len(used),
                "index": self.retriever.index_info(),
            },
            hits=[trace_hit(h) for h in hits],
            used=used,
            system=SYSTEM_PROMPT,
            prompt=rendered.prompt,
            spans=[PromptSpan(i, hits[i].chunk.chunk_id, a, e) for i, (a, e) in zip(used, rendered.spans)],
            answer=gen.text,
            signals=signals,
            labels=labels,
            timing={
                "retrieval_ms": round((t1 - t0) * 1000, 2),
                "generation_ms": round(gen.ms, 2),
                "prompt_tokens": gen.prompt_tokens,
            },
            messages=messages,
            prompt_message=anchor,
        )

    def _messages(self, prompt: str) -> tuple[list[dict[str, str]], int | None]:
        """The messages a chat endpoint is sent, with the index of the one whose content is `prompt`;
        none for the local model and a completions endpoint, whose rendered `prompt` is sent as is."""
        framed = self.llm.frame(SYSTEM_PROMPT, prompt) if isinstance(self.llm, EndpointLLM) else None
        return (framed, 1) if framed else ([], None)

    def model_record(self, settings: GenerationSettings) -> dict[str, Any]:
        """The trace's `model`: id, settings and backend; for an endpoint its URL, name and mode (no key)."""
        record: dict[str, Any] = {"id": self.llm.model_id, "quantize": self.llm.quantize,
                                  "settings": settings.to_dict(), "backend": self.llm.backend}
        if isinstance(self.llm, EndpointLLM):
            record |= self.llm.describe()
        return record

    def default_labels(self, query: str) -> Labels:
        """Labels of a matching demo/attack query shipped with the corpus, else none."""
        q = self.corpus.labels_for(query)
        return Labels(q.id, list(q.answers), q.target) if q else Labels()


def trace_hit(h: Hit) -> TraceHit:
    c = h.chunk
    return TraceHit(
        rank=h.rank,
        doc_id=c.doc_id,
        chunk_id=c.chunk_id,
        title=c.title,
        text=c.text,
        source_start=c.start,
        source_end=c.end,
        bm25=h.bm25,
        dense=h.dense,
        hybrid=h.hybrid,
        bm25_norm=h.bm25_norm,
        dense_norm=h.dense_norm,
        poison_spans=[list(s) for s in c.poison_spans],
        ends_document=c.ends_document,
    )


def build_retriever(
    corpus: Corpus,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
    index: str | None = None,
    build_index: bool = False,
) -> HybridRetriever:
    """The corpus's retriever: ragsec's own cached in-process index, or with `index` a Chroma collection as
    the dense side (BM25 stays in-process over the corpus's texts). `build_index` first embeds the corpus
    (cached) and upserts it into that collection; without it the collection is only read."""
    chunks = chunk_corpus(corpus)
    if not index:
        return in_process_index(chunks, embedder, progress)
    bm25 = None
    if build_index:
        local = in_process_index(chunks, embedder, progress)
        chroma.build_collection(index, chunks, local.embeddings, embedder.model_id, progress)
        bm25 = local.bm25  # already fitted over these chunks
    dense = chroma.open_dense(index, chunks, embedder)
    return HybridRetriever.over(chunks, embedder, dense, bm25 or BM25().fit([tokenize(c.text) for c in chunks]))


def in_process_index(
    chunks: list[Chunk], embedder: Embedder, progress: Callable[[int, int], None] | None = None
) -> HybridRetriever:
    """ragsec's own index over these chunks, from the cache or built into it (also the in-process side of
    a benchmark that compares a store with it)."""
    return HybridRetriever.build(chunks, embedder, cache_root=index_cache(), progress=progress)


def index_cache() -> Path:
    return cache_dir() / "indexes"
