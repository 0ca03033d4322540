"""An incident end to end: the planted secops case answered by a real llama.cpp server, logged the two ways a
deployment logs it (our incident JSON; OpenInference spans from the real OpenAI instrumentation), imported,
and traced back by Pass-1 over HTTP to the same characters as the trace ragsec made itself."""

from __future__ import annotations

import json

import pytest

from ragsec_core.cli.main import main
from ragsec_core.data.openinference import import_trace
from ragsec_core.data.trace import Trace, TraceStore, validate
from ragsec_core.models.endpoint import EndpointConfig, EndpointLLM
from ragsec_core.traceback.ragcharacter import run_pass1

from .test_endpoint import BASTION, PLANTED
from .test_incident_import import SpanFiles, retriever_span

pytestmark = [pytest.mark.endpoint, pytest.mark.model]


@pytest.fixture(scope="module")
def incident(llama_server, embedder):
    """(the live trace, its Pass-1 result, the endpoint client) for the bastion question over HTTP."""
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.rag import Pipeline, build_retriever

    corpus = load_corpus("secops", "embedded")
    llm = EndpointLLM(EndpointConfig(llama_server.base_url, llama_server.model))
    trace = Pipeline(corpus, build_retriever(corpus, embedder), llm).ask(BASTION)
    assert trace.signals.par, trace.answer
    return trace, run_pass1(llm, trace), llm


def _attributed(res) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(a.text for a in res.attribution)


def _same_event(imported: Trace, live: Trace) -> None:
    validate(imported.to_dict())
    assert imported.answer == live.answer and imported.messages == live.messages and imported.prompt == live.prompt
    assert [(s.start, s.end) for s in imported.spans] == [(s.start, s.end) for s in live.spans]
    assert imported.signals.par and imported.origin["kind"] == "import"


def test_an_exported_incident_imports_and_traces_to_the_same_span(incident, llama_server, tmp_path):
    live, res, llm = incident
    record = {
        "query": live.query,
        "passages": [{"id": h.chunk_id, "text": h.text, "score": h.hybrid, "used": i in live.used}
                     for i, h in enumerate(live.hits)],
        "messages": live.messages, "answer": live.answer,
        "model": {"name": llama_server.model, "url": llama_server.base_url},
        "labels": {"target": live.labels.target, "answers": live.labels.answers},
    }
    path = tmp_path / "incident.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    imported = import_trace(path)
    _same_event(imported, live)
    again = run_pass1(llm, imported)
    assert again.resolved and _attributed(again) == _attributed(res) and any(PLANTED in t for t in _attributed(again))
    del record["labels"]  # the analyst names the false answer on the command line instead
    path.write_text(json.dumps(record), encoding="utf-8")
    store = tmp_path / "t.jsonl"
    assert main(["import", str(path), "--target", str(live.labels.target), "--store", str(store)]) == 0
    stored = TraceStore(store).get(json.loads(store.read_text())["trace_id"])
    assert stored.signals.par_mode == "labelled" and stored.signals.par and stored.labels.target == live.labels.target


def test_openinference_spans_of_the_incident_import_and_trace_to_the_same_span(incident, llama_server, tmp_path):
    """The deployment's own telemetry: a RETRIEVER span it writes and the LLM span the OpenAI instrumentation
    records around its real call to the server."""
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from openinference.semconv.trace import SpanAttributes as A

    live, res, _ = incident
    files = SpanFiles(tmp_path)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=files.provider)
    try:
        client = openai.OpenAI(base_url=llama_server.base_url, api_key="none")
        with files.tracer.start_as_current_span("rag") as chain:
            chain.set_attribute(A.OPENINFERENCE_SPAN_KIND, "CHAIN")
            chain.set_attribute(A.INPUT_VALUE, live.query)
            retriever_span(files.tracer, [(live.hits[i].chunk_id, live.hits[i].text, live.hits[i].hybrid) for i in live.used],
                           live.query)
            client.chat.completions.create(model=llama_server.model, messages=live.messages,  # type: ignore[arg-type]
                                           max_tokens=live.model["settings"]["max_new_tokens"], temperature=0, seed=0)
    finally:
        instrumentor.uninstrument()
    imported = import_trace(files.close()["otlp"], labels=live.labels)  # spans carry no labels: the analyst's
    _same_event(imported, live)
    assert imported.model["backend"] == "endpoint" and "url" not in imported.model["endpoint"]  # spans carry no URL
    again = run_pass1(EndpointLLM(EndpointConfig(llama_server.base_url, imported.model["endpoint"]["model"])), imported)
    assert again.resolved and _attributed(again) == _attributed(res)
