"""The guided teaching demo: clean answer → poison → poisoned answer → attention → traceback → remediation.

Each stage is a plain function over core objects so the page only sequences them and the test suite can
run the same story without a browser. Scenarios are the labelled demo queries shipped with the sample
corpora (each names the poisoned variant that attacks it); payloads are false facts and canaries only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.corpus import (
    Corpus,
    Document,
    Query,
    load_corpus,
    sample_corpus_names,
)
from ragsec_core.dscan.detector import analyse_trace
from ragsec_core.traceback.ragcharacter import run_pass1
from ragsec_core.traceback.remediate import remediate

STAGES = ("clean answer", "inject poison", "poisoned answer", "attention collapse", "traceback", "remediation")
# A demo query whose false fact the default model adopts at k=5, alpha=0.5 and whose remediation restores
# the correct answer (measured over every shipped scenario; see README).
DEFAULT_SCENARIO = ("general", "q02")


@dataclass(frozen=True)
class Scenario:
    corpus: str
    query: Query

    @property
    def variant(self) -> str:
        return self.query.variant or ""

    @property
    def label(self) -> str:
        return f"{self.corpus} · {self.query.id} · {self.variant}: {self.query.query}"


def scenarios() -> list[Scenario]:
    """Every shipped demo query that names the poisoned variant attacking it."""
    out = []
    for name in sample_corpus_names():
        out += [Scenario(name, q) for q in load_corpus(name).queries if q.variant and q.target]
    return out


def default_index(items: list[Scenario]) -> int:
    for i, s in enumerate(items):
        if (s.corpus, s.query.id) == DEFAULT_SCENARIO:
            return i
    return 0


def injected_documents(poisoned: Corpus, query: Query) -> list[Document]:
    """The planted documents that carry this query's false target."""
    docs = [d for d in poisoned.documents if d.poison_spans and d.poison_target == query.target]
    if not docs:
        raise RagsecError(f"variant has no poison for query {query.id}: nothing to inject")
    return docs


@dataclass
class DemoState:
    """What the demo has produced so far; `stage` counts the completed stages."""

    scenario: Scenario
    stage: int = 0
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.stage >= len(STAGES)

    @property
    def next_stage(self) -> str | None:
        return None if self.done else STAGES[self.stage]


def advance(state: DemoState, clean: Any, poisoned: Any, detector: Any, embedder: Any, k: int = 5, alpha: float = 0.5,
            surrogate: Any = None) -> str:
    """Run the next stage; `clean` / `poisoned` are Pipelines over the clean corpus and its variant. With
    an endpoint generator, attention is read from `surrogate` (a local model) over the same prompts."""
    name, r, q = state.next_stage, state.results, state.scenario.query.query
    if name is None:
        raise RagsecError("the demo is finished: restart it")
    if name == "clean answer":
        r["clean"] = clean.ask(q, k=k, alpha=alpha)
    elif name == "inject poison":
        r["injected"] = injected_documents(poisoned.corpus, state.scenario.query)
    elif name == "poisoned answer":
        r["poisoned"] = poisoned.ask(q, k=k, alpha=alpha)
    elif name == "attention collapse":
        r["dscan_clean"] = analyse_trace(r["clean"], surrogate or clean.llm, detector=detector, embedder=embedder)
        r["dscan_poisoned"] = analyse_trace(r["poisoned"], surrogate or poisoned.llm, detector=detector, embedder=embedder)
    elif name == "traceback":
        r["pass1"] = run_pass1(poisoned.llm, r["poisoned"], "ANY" if not r["poisoned"].signals.par else "PAR")
    elif name == "remediation":
        spans = r["pass1"].attribution
        if not spans:
            raise RagsecError("the traceback found no span to remove (the poisoned answer was not triggered)")
        r["remediation"] = remediate(poisoned, r["poisoned"], spans)
    state.stage += 1
    return name
