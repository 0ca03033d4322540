"""What a Semantic Chameleon sweep holds while it runs: the engines a trial needs (built once per process,
also on each Ray actor) and the driver's results and clock. Shared by `bench/chameleon.py` (the command
and the main trials) and `bench/chameleon_stages.py` (the later stages)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core.chameleon.attack import Encoder, corpus_vocabulary
from ragsec_core.data.corpus import Corpus
from ragsec_core.models.llm import load_llm
from ragsec_core.rag import build_retriever, in_process_index
from ragsec_core.retrieval.embed import Embedder

if TYPE_CHECKING:
    from ragsec_core.chameleon.scenarios import Scenario
    from ragsec_core.models.llm import LLM
    from ragsec_core.retrieval.hybrid import HybridRetriever


@dataclass
class Engines:
    """What a trial needs: inputs, MiniLM (index and encoder), the fluency LM. Built once per process: the
    driver's sweep is one, and with --ray each actor builds its own from the driver's corpus and scenarios.
    `corpus_emb` is read from the index once (a store sends it once, not once per trial)."""

    args: argparse.Namespace
    scenarios: list[Scenario]
    corpus: Corpus
    retriever: HybridRetriever
    compare: HybridRetriever | None
    corpus_emb: np.ndarray
    encoder: Encoder
    vocab: list[str]
    llm: LLM | None

    @classmethod
    def load(cls, args: argparse.Namespace, corpus: Corpus, scenarios: list[Scenario], e2e: bool) -> Engines:
        """The LM is loaded for the fluency filter, and for the end-to-end stage when `e2e`."""
        retriever = build_retriever(corpus, embedder := Embedder(), index=args.index, build_index=args.index_build)
        compare = in_process_index(retriever.chunks, embedder) if args.compare_in_process else None
        llm = load_llm() if not args.no_fluency or (e2e and not args.no_e2e) else None
        emb = np.asarray(retriever.embeddings, dtype=np.float32)
        return cls(args, scenarios, corpus, retriever, compare, emb, Encoder(embedder),
                   corpus_vocabulary([c.text for c in retriever.chunks]), llm)

    @property
    def common(self) -> dict[str, Any]:
        """The optimiser settings every pair is built with."""
        a = self.args
        return dict(iterations=a.iterations, n_candidates=a.candidates, max_modified=a.max_modified,
                    llm=None if a.no_fluency else self.llm, ppl_cap=a.ppl_cap)

    def trial(self, i: int) -> tuple[Scenario, int]:
        """Trial i attacks scenario i mod S with seed base + i div S."""
        return self.scenarios[i % len(self.scenarios)], self.args.seed + i // len(self.scenarios)


@dataclass
class Sweep(Engines):
    """The driver's engines plus the results so far and the clock. Each stage adds its key to `results`
    and saves, so an interrupted run keeps every finished trial and stage."""

    out_path: Path = Path()
    results: dict[str, Any] = field(default_factory=dict)
    t_start: float = field(default_factory=time.time)

    def out_of_time(self) -> bool:
        """`--max-minutes` (unset or 0: no limit) has passed since the start: start no new trial."""
        return bool(self.args.max_minutes) and time.time() > self.t_start + 60 * self.args.max_minutes

    def save(self, stage: str) -> None:
        self.results["config"]["completed_stage"] = stage
        self.results["config"]["elapsed_s"] = round(time.time() - self.t_start, 1)
        write_text_atomic(self.out_path, json.dumps(self.results, indent=1, default=float) + "\n")
