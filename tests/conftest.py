"""Session fixtures: the real SmolLM2 and MiniLM load once; indexes are real FAISS + BM25."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ragsec_core._util.paths import shared_data_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
# Tests that use one of these fixtures load a real model: marked `model`, left out of the fast tier.
MODEL_FIXTURES = frozenset({"llm", "embedder", "pipeline", "llama_server"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks by what a test uses, so the fast tier (`make test-fast`) cannot drift from the fixtures:
    `model` for the model fixtures (directly or through another fixture), `browser` for the Chromium
    tests. Tests that load a model in a subprocess carry `@pytest.mark.model` themselves."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
        if "browser" in item.path.name:
            item.add_marker(pytest.mark.browser)
        if "llama_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.endpoint)
SHARED_DATA = shared_data_dir()


@pytest.fixture(scope="session")
def llm():
    from ragsec_core.models.llm import load_llm

    return load_llm()


@pytest.fixture(scope="session")
def embedder():
    from ragsec_core.retrieval.embed import Embedder

    return Embedder()


@pytest.fixture(scope="session")
def pipeline(llm, embedder) -> Callable[..., object]:
    """`pipeline(name, variant=None)` -> a cached Pipeline over a sample corpus."""
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.rag import Pipeline, build_retriever

    cache: dict[tuple[str, str | None], Pipeline] = {}

    def make(name: str, variant: str | None = None) -> Pipeline:
        if (name, variant) not in cache:
            corpus = load_corpus(name, variant)
            cache[(name, variant)] = Pipeline(corpus, build_retriever(corpus, embedder), llm)
        return cache[(name, variant)]

    return make


@pytest.fixture(scope="session")
def untargeted(pipeline) -> object:
    """An untargeted incident: a planted false fact (secops' false_facts variant) makes the model give
    another SIEM hostname while the clean passage that states the right one is still in the prompt."""
    trace = pipeline("secops", "false_facts").ask("What is the hostname of the Northwind SIEM?")
    assert trace.signals.correct is False and trace.labels.answers, trace.answer
    return trace


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module's model runs: on a shared 2-core box OpenMP spin-waits make two
    threads slower than one. Modules opt in with `pytestmark = pytest.mark.usefixtures(...)`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def shared_data(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real attack data not present at {path} (only the dev checkout has ../shared/data)")
    return path


@pytest.fixture
def make_trace():
    """A structurally complete trace built by hand, for store and predicate tests that need no model."""
    from ragsec_core.data.trace import Labels, PromptSpan, Trace, TraceHit, compute_signals, new_trace_id, now_iso

    def make(answer: str = "Sydney", labels: Labels | None = None, text: str = "Australia's capital is Sydney.",
             query: str = "What is the capital of Australia?") -> Trace:
        prompt = f"Contexts:\n[1] {text}\nQuestion: q\nAnswer:"
        a = prompt.index(text)
        hit = TraceHit(1, "d", "d#0", "", text, 0, len(text), 1.0, 0.5, 1.0, 1.0, 1.0)
        labels = labels or Labels()
        return Trace(
            trace_id=new_trace_id(),
            created_at=now_iso(),
            query=query,
            model={"id": "m", "quantize": "none", "settings": {"max_new_tokens": 8, "do_sample": False, "temperature": 1.0, "seed": 0}},
            retrieval={"corpus": "c", "corpus_source": "", "corpus_hash": "0" * 64, "embedder": "e", "k": 1, "alpha": 0.5, "use": 1},
            hits=[hit],
            used=[0],
            system="s",
            prompt=prompt,
            spans=[PromptSpan(0, "d#0", a, a + len(text))],
            answer=answer,
            signals=compute_signals(answer, {0: text}, labels),
            labels=labels,
            timing={"retrieval_ms": 1.0, "generation_ms": 1.0, "prompt_tokens": 10},
        )

    return make


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """A real llama.cpp server (llama-cpp-python) serving the bundled SmolLM2 GGUF for this session."""
    from ragsec_core.models.llm import default_gguf_path

    from .servers import LlamaServer

    server = LlamaServer(default_gguf_path(), tmp_path_factory.mktemp("llama"))
    yield server
    server.stop()
