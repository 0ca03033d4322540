"""ragsec: a forensic workbench for poisoned retrieval-augmented generation.

Data flows one way: corpus -> retrieval -> Pass-0 trace -> analyses -> views (CLI, app). The names
below are the library's public API; each is imported on first use, so `import ragsec_core` loads no
torch. A short session::

    from ragsec_core import Embedder, Pipeline, build_retriever, load_corpus, load_llm, run_pass1
    corpus = load_corpus("secops", "embedded")
    pipeline = Pipeline(corpus, build_retriever(corpus, Embedder()), load_llm())
    trace = pipeline.ask("What is the hostname of the bastion host?")
    result = run_pass1(pipeline.llm, trace)        # which characters made the model say this
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_API: dict[str, str] = {
    # data: corpora, chunks, traces
    "Corpus": "ragsec_core.data.corpus",
    "Document": "ragsec_core.data.corpus",
    "Chunk": "ragsec_core.data.corpus",
    "load_corpus": "ragsec_core.data.corpus",
    "chunk_corpus": "ragsec_core.data.corpus",
    "sample_corpus_names": "ragsec_core.data.corpus",
    "Trace": "ragsec_core.data.trace",
    "TraceStore": "ragsec_core.data.trace",
    "Labels": "ragsec_core.data.trace",
    "RagsecError": "ragsec_core._util.errors",
    # engines
    "Embedder": "ragsec_core.retrieval.embed",
    "HybridRetriever": "ragsec_core.retrieval.hybrid",
    "LLM": "ragsec_core.models.llm",
    "load_llm": "ragsec_core.models.llm",
    # Pass-0
    "Pipeline": "ragsec_core.rag",
    "build_retriever": "ragsec_core.rag",
    # analyses
    "run_pass1": "ragsec_core.traceback.ragcharacter",
    "METHODS": "ragsec_core.traceback.baselines",
    "get_method": "ragsec_core.traceback.baselines",
    "analyse_trace": "ragsec_core.dscan.detector",
    "Detector": "ragsec_core.dscan.detector",
    "run_monitor": "ragsec_core.monitor.detectors",
}
_RENAMED = {"get_method": "get"}

# A literal list, so linters and IDEs see the API; tests/test_api.py checks it against _API.
__all__ = [
    "__version__", "Corpus", "Document", "Chunk", "load_corpus", "chunk_corpus", "sample_corpus_names",
    "Trace", "TraceStore", "Labels", "RagsecError", "Embedder", "HybridRetriever", "LLM", "load_llm",
    "Pipeline", "build_retriever", "run_pass1", "METHODS", "get_method", "analyse_trace", "Detector",
    "run_monitor",
]

if TYPE_CHECKING:
    from ragsec_core._util.errors import RagsecError
    from ragsec_core.data.corpus import Chunk, Corpus, Document, chunk_corpus, load_corpus, sample_corpus_names
    from ragsec_core.data.trace import Labels, Trace, TraceStore
    from ragsec_core.dscan.detector import Detector, analyse_trace
    from ragsec_core.models.llm import LLM, load_llm
    from ragsec_core.monitor.detectors import run_monitor
    from ragsec_core.rag import Pipeline, build_retriever
    from ragsec_core.retrieval.embed import Embedder
    from ragsec_core.retrieval.hybrid import HybridRetriever
    from ragsec_core.traceback.baselines import METHODS
    from ragsec_core.traceback.baselines import get as get_method
    from ragsec_core.traceback.ragcharacter import run_pass1


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access (PEP 562), then cache the name here."""
    if name not in _API:
        raise AttributeError(f"module 'ragsec_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), _RENAMED.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
