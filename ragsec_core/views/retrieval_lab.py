"""View models for the Retrieval lab page: ranks across alpha, session-only poisons, sleeper/trigger pairs.

The page shows how the hybrid weight alpha reorders the top-K and what an injected document does to it.
Everything here works on a *new* retriever (`HybridRetriever.extended`), so the process-wide cached one
is never changed and one session's poisons cannot leak into another's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.chameleon.attack import Encoder
from ragsec_core.chameleon.evaluate import (
    SLEEPER_ID,
    TRIGGER_ID,
    build_pair,
    evaluate_retrieval,
)
from ragsec_core.chameleon.scenarios import Scenario
from ragsec_core.data.corpus import Chunk
from ragsec_core.retrieval.hybrid import Hit, HybridRetriever

INJECTED_PREFIX = "session-poison-"
MAX_POISON_CHARS = 4000


def alpha_grid(steps: int = 21) -> list[float]:
    """Evenly spaced alphas from 0 to 1, rounded so labels and dictionary keys stay readable."""
    if steps < 2:
        raise RagsecError("the alpha sweep needs at least 2 steps")
    return [round(i / (steps - 1), 4) for i in range(steps)]


@dataclass
class RankPaths:
    """Top-K rank of every chunk that enters any top-K along an alpha sweep (None: outside the top-K)."""

    alphas: list[float]
    k: int
    ranks: dict[str, list[int | None]]
    poisoned: dict[str, bool]
    injected: dict[str, bool]
    texts: dict[str, str] = field(default_factory=dict)

    def order(self) -> list[str]:
        """Chunks sorted by their best rank, so legends list the strongest contenders first."""
        return sorted(self.ranks, key=lambda c: (min(r for r in self.ranks[c] if r is not None), c))


def is_poison(chunk: Chunk) -> bool:
    return bool(chunk.poison_spans) or chunk.doc_id.startswith(INJECTED_PREFIX) or chunk.doc_id in (SLEEPER_ID, TRIGGER_ID)


def rank_paths(retriever: HybridRetriever, query: str, k: int, alphas: Sequence[float]) -> RankPaths:
    """The query is embedded once and searched at every alpha (ties break by chunk order, as `search`)."""
    if not query.strip():
        raise RagsecError("the query is empty: type a question or pick a demo query")
    q = retriever.embedder.embed([query])[0]
    ranks: dict[str, list[int | None]] = {}
    chunks: dict[str, Chunk] = {}
    for i, a in enumerate(alphas):
        for h in retriever.search_embedded(query, q, k=k, alpha=float(a)):
            cid = h.chunk.chunk_id
            ranks.setdefault(cid, [None] * len(alphas))[i] = h.rank
            chunks[cid] = h.chunk
    return RankPaths(
        list(alphas), k, ranks,
        poisoned={c: is_poison(ch) for c, ch in chunks.items()},
        injected={c: ch.doc_id.startswith(INJECTED_PREFIX) or ch.doc_id in (SLEEPER_ID, TRIGGER_ID) for c, ch in chunks.items()},
        texts={c: ch.text for c, ch in chunks.items()},
    )


def hit_rows(hits: Sequence[Hit]) -> list[dict]:
    """Table rows for `st.dataframe`; ids and text have invisible characters made visible."""
    return [
        {
            "rank": h.rank,
            "chunk": escape_controls(h.chunk.chunk_id),
            "poison": is_poison(h.chunk),
            "hybrid": round(h.hybrid, 4),
            "bm25": round(h.bm25, 3),
            "bm25 (norm)": round(h.bm25_norm, 3),
            "dense": round(h.dense, 4),
            "dense (norm)": round(h.dense_norm, 3),
            "text": escape_controls(h.chunk.text),
        }
        for h in hits
    ]


# ---------------------------------------------------------------- session-only poisons

def poison_chunk(text: str, n: int) -> Chunk:
    """A custom poison as one chunk; the whole text is its gold span, so views mark it as poison."""
    if not text.strip():
        raise RagsecError("the poison text is empty: type the passage to inject")
    if len(text) > MAX_POISON_CHARS:
        raise RagsecError(f"the poison text is {len(text)} characters: keep it under {MAX_POISON_CHARS}")
    doc = f"{INJECTED_PREFIX}{n}"
    return Chunk(f"{doc}#0", doc, text, 0, len(text), title="injected (this session)", poison_spans=((0, len(text)),))


def pair_chunks(sleeper: str, trigger: str) -> list[Chunk]:
    """Sleeper and trigger with the doc ids `chameleon.evaluate.evaluate_retrieval` looks for."""
    return [Chunk(f"{SLEEPER_ID}#0", SLEEPER_ID, sleeper, 0, len(sleeper), title="sleeper (this session)"),
            Chunk(f"{TRIGGER_ID}#0", TRIGGER_ID, trigger, 0, len(trigger), title="trigger (this session)")]


@dataclass
class SessionPoisons:
    """The extra chunks of one session with their embeddings (embedded once, reused on every rerun)."""

    chunks: list[Chunk] = field(default_factory=list)
    embeddings: list[np.ndarray] = field(default_factory=list)

    def add(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        self.chunks.extend(chunks)
        self.embeddings.extend(np.asarray(embeddings, dtype=np.float32))

    def drop_pair(self) -> None:
        keep = [i for i, c in enumerate(self.chunks) if c.doc_id not in (SLEEPER_ID, TRIGGER_ID)]
        self.chunks = [self.chunks[i] for i in keep]
        self.embeddings = [self.embeddings[i] for i in keep]

    def has_pair(self) -> bool:
        return {SLEEPER_ID, TRIGGER_ID} <= {c.doc_id for c in self.chunks}

    def next_id(self) -> int:
        return sum(c.doc_id.startswith(INJECTED_PREFIX) for c in self.chunks) + 1

    def apply(self, retriever: HybridRetriever) -> HybridRetriever:
        """The base retriever itself when nothing is injected, else a new extended one."""
        if not self.chunks:
            return retriever
        return retriever.extended(list(self.chunks), np.vstack(self.embeddings))


def add_custom_poison(poisons: SessionPoisons, retriever: HybridRetriever, text: str) -> Chunk:
    chunk = poison_chunk(text, poisons.next_id())
    poisons.add([chunk], retriever.embedder.embed([chunk.text]))
    return chunk


def generate_pair(
    poisons: SessionPoisons,
    retriever: HybridRetriever,
    scenario: Scenario,
    iterations: int,
    on_step: Callable[[int, int], None] | None = None,
    seed: int = 0,
) -> tuple[str, str]:
    """Gradient sleeper/trigger pair (no fluency model in the loop, to stay fast); replaces any earlier pair.

    `on_step(done, total)` counts optimiser iterations over both documents."""
    if not 1 <= iterations <= 200:
        raise RagsecError(f"iterations must be between 1 and 200 (got {iterations})")
    done = [0]

    def step(_: int) -> None:
        done[0] += 1
        if on_step:
            on_step(done[0], 2 * iterations)

    pair = build_pair(scenario, Encoder(retriever.embedder), retriever.embeddings, method="gradient",
                      iterations=iterations, seed=seed, on_step=step)
    chunks = pair_chunks(pair.sleeper.text, pair.trigger.text)
    poisons.drop_pair()
    poisons.add(chunks, retriever.embedder.embed([c.text for c in chunks]))
    return pair.sleeper.text, pair.trigger.text


def pair_metrics(retriever: HybridRetriever, scenario: Scenario, k: int, alphas: Sequence[float]) -> dict[str, list]:
    """Co-retrieval, any-retrieval, benign retrieval rate and stealth of the injected pair per alpha."""
    ev = evaluate_retrieval(retriever, scenario, alphas=[float(a) for a in alphas], ks=(k,))
    rows = [ev[f"alpha={float(a)},k={k}"] for a in alphas]
    out: dict[str, list] = {"alpha": [float(a) for a in alphas]}
    for m in ("co_retrieval", "any_retrieval", "stealth", "overall"):
        out[m] = [float(bool(r[m])) for r in rows]
    out["benign_retrieval_rate"] = [float(r["benign_retrieval_rate"]) for r in rows]
    out["sleeper_rank"] = [r["sleeper_rank"] for r in rows]
    out["trigger_rank"] = [r["trigger_rank"] for r in rows]
    return out
