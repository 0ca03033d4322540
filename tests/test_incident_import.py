"""`ragsec import`: a deployment's logged interaction (incident JSON, OpenInference spans) becomes a stored,
valid version-2 Pass-0 trace whose spans reproduce the passages; trace schema version 2 and the version-1
records it still reads. Real parts only: the OpenTelemetry SDK's exporters and OTLP encoder write the span
files, and one test records a real OpenAI-client call to a real server through the OpenInference
instrumentation. Everything but that test is fast (no model loads)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.urls import redact_url
from ragsec_core.cli.imports import add_import_parser
from ragsec_core.cli.main import main
from ragsec_core.data.incident import IMPORT_FORMATS, MAX_IMPORT_BYTES, collapse, incident_schema
from ragsec_core.data.openinference import import_trace
from ragsec_core.data.trace import SCHEMA_VERSION, Labels, Trace, TraceStore, compute_signals, json_schema, validate

SYSTEM = "Answer the question from the contexts in a few words."
P1 = "Australia's capital city is Sydney, home of the federal parliament since 1927."
P2 = "Canberra is a planned city in the Australian Capital Territory."
P3 = "The museum opens at nine and closes at five."
QUERY = "What is the capital of Australia?"


def user_prompt(*texts: str) -> str:
    return "Contexts:\n" + "".join(f"[{i + 1}] {t}\n" for i, t in enumerate(texts)) + f"Question: {QUERY}\nAnswer:"


def incident(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "query": QUERY,
        "passages": [
            {"id": "kb-7#2", "text": P1, "score": 0.83, "title": "Australia"},
            {"id": "kb-7#5", "text": P2, "score": 0.71},
            {"id": "faq-1", "text": P3, "score": 0.12, "used": False},
        ],
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_prompt(P1, P2)}],
        "answer": "Sydney",
        "model": {"name": "support-bot-7b", "url": "https://bob:hunter2@llm.example.internal/v1?api_key=abc&region=eu"},
        "labels": {"target": "Sydney", "answers": ["Canberra"]},
        "created_at": "2026-11-29T16:30:00+01:00",
    }
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not None}


def write(tmp_path: Path, doc: Any, name: str = "incident.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def cli(*argv: str) -> int:
    return main(["import", *argv])


# ---------------------------------------------------------------- the incident format

def test_incident_round_trip_through_the_cli_and_the_store(tmp_path, capsys):
    path, store = write(tmp_path, incident()), tmp_path / "traces.jsonl"
    assert cli(str(path), "--store", str(store)) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "3 passages" in out[1] and "2 anchored" in out[1] and "PAR" in out[1]
    t = TraceStore(store).get(out[0])
    validate(t.to_dict())
    assert t.schema_version == SCHEMA_VERSION == 2 and t.query == QUERY and t.answer == "Sydney"
    assert [h.chunk_id for h in t.hits] == ["kb-7#2", "kb-7#5", "faq-1"] and t.used == [0, 1]
    assert [h.score for h in t.hits] == [0.83, 0.71, 0.12] and t.hits[0].title == "Australia"
    assert t.messages == incident()["messages"] and t.prompt_message == 1 and t.prompt == user_prompt(P1, P2)
    assert t.system == SYSTEM
    assert [t.prompt[s.start : s.end] for s in t.spans] == [P1, P2] and [s.hit for s in t.spans] == [0, 1]
    assert t.signals == compute_signals("Sydney", {0: P1, 1: P2}, Labels(None, ["Canberra"], "Sydney"))
    assert t.signals.par and t.signals.t_asr and t.signals.supporting == [0]
    assert t.created_at == "2026-11-29T15:30:00+00:00"
    assert t.model["id"] == "support-bot-7b" and "quantize" not in t.model
    assert t.model["endpoint"] == {"model": "support-bot-7b", "mode": "chat", "url": "https://llm.example.internal/v1?region=eu"}
    assert "hunter2" not in store.read_text() and "abc" not in json.dumps(t.model)
    r = t.retrieval
    assert (r["corpus"], r["corpus_source"], r["k"], r["use"], r["alpha"], r["scores"]) == ("import", "incident.json", 3, 2, None, "imported")
    assert t.origin["kind"] == "import" and t.origin["format"] == "incident" and t.origin["file"] == "incident.json"
    assert t.origin["normalised"] is False and len(t.origin["sha256"]) == 64 and str(tmp_path) not in json.dumps(t.origin)
    # Pass-1's view of the prompt: the masked prompt replaces its message, the others go verbatim.
    masked = t.messages_for(t.prompt.replace(P1, "_" * len(P1)))
    assert masked[0] == t.messages[0] and P1 not in masked[1]["content"] and t.messages[1]["content"] == t.prompt


def test_the_documented_example_imports(tmp_path):
    doc = (Path(__file__).resolve().parent.parent / "docs" / "import.md").read_text(encoding="utf-8")
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    t = import_trace(write(tmp_path, example))
    assert t.answer == "Sydney" and t.signals.par and t.used == [0, 1] and t.origin["normalised"] is False


def test_completions_prompt_and_rewrapped_whitespace_anchor_through_the_offset_map(tmp_path):
    # The gateway re-wrapped the passages: a line break and a double space inside P1, tabs around P2.
    wrapped1 = P1.replace("city is", "city\n  is").replace(" home", "\nhome")
    prompt = f"{SYSTEM}\n\nContexts:\n[1] {wrapped1}\n[2]\t{P2.replace(' ', chr(9), 2)}\t\nQuestion: {QUERY}\nAnswer:"
    doc = incident(messages=None, prompt=prompt, system=SYSTEM)
    t = import_trace(write(tmp_path, doc))
    assert t.prompt_message is None and t.messages == [] and t.prompt == prompt
    assert t.model["endpoint"]["mode"] == "completions" and t.origin["normalised"] is True
    assert t.hits[0].text == wrapped1 != P1 and t.hits[1].text == P2.replace(" ", "\t", 2)
    for s in t.spans:
        assert t.prompt[s.start : s.end] == t.hits[s.hit].text
    assert t.hits[2].text == P3  # unused passages keep their own text
    validate(t.to_dict())


def test_collapse_maps_each_character_back():
    flat, where = collapse("a \n\t b  c\n")
    assert flat == "a b c " and [("a \n\t b  c\n")[i] for i in where] == ["a", " ", "b", " ", "c", "\n"]


def test_repeated_passages_take_the_next_occurrence_in_order(tmp_path):
    a, b = "Sydney is the capital.", "Parliament sits in Sydney."
    prompt = f"Note: {b}\nContexts:\n[1] {a}\n[2] {b}\nQ: {QUERY}"
    doc = incident(messages=None, prompt=prompt,
                   passages=[{"id": "a", "text": a}, {"id": "b", "text": b}])
    t = import_trace(write(tmp_path, doc))
    assert [s.start for s in t.spans] == [prompt.index(a), prompt.rindex(b)]
    doc["passages"].reverse()  # out of order: the later one still anchors (first occurrence anywhere)
    t = import_trace(write(tmp_path, doc))
    assert [s.start for s in t.spans] == [prompt.index(b), prompt.index(a)]
    doc["passages"] = [{"id": "doc-1", "text": a}, {"id": "doc-1", "text": b}]  # two chunks of one document
    t = import_trace(write(tmp_path, doc))
    assert [(h.doc_id, h.chunk_id) for h in t.hits] == [("doc-1", "doc-1"), ("doc-1", "doc-1~1")]
    assert [s.chunk_id for s in t.spans] == ["doc-1", "doc-1~1"]


def test_a_passage_that_is_not_in_the_prompt_fails_naming_it(tmp_path, capsys):
    doc = incident()
    doc["passages"][1]["text"] = "Melbourne was the seat of government until 1927."
    path = write(tmp_path, doc)
    with pytest.raises(RagsecError, match=r"passage 'kb-7#5' is not in any message"):
        import_trace(path)
    assert cli(str(path), "--store", str(tmp_path / "s.jsonl")) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragsec: error: passage 'kb-7#5'") and err.count("\n") == 1
    assert not (tmp_path / "s.jsonl").exists()
    split = incident(messages=[{"role": "system", "content": f"{SYSTEM}\n{P1}"}, {"role": "user", "content": user_prompt(P2)}])
    with pytest.raises(RagsecError, match=r"not all in one message \(kb-7#2 in message 0, kb-7#5 in message 1\)"):
        import_trace(write(tmp_path, split))
    doc = incident(messages=None, prompt=user_prompt(P1))
    with pytest.raises(RagsecError, match=r"passage 'kb-7#5' is not in the prompt"):
        import_trace(write(tmp_path, doc))


@pytest.mark.parametrize(("change", "message"), [
    ({"passages": [{"id": "a", "text": 5}]}, r"at passages/0/text: 5 is not of type 'string'"),
    ({"answer": None}, r"at \(root\): 'answer' is a required property"),
    ({"prompt": "also a prompt"}, r"exactly one of 'messages'"),
    ({"messages": None}, r"exactly one of 'messages'"),
    ({"unknown": 1}, r"Additional properties are not allowed \('unknown' was unexpected\)"),
    ({"passages": []}, r"at passages: \[\] should be non-empty"),
    ({"passages": [{"id": f"p{i}", "text": "x"} for i in range(1001)]}, r"1001 passages; at most 1000"),
    ({"model": {"name": "m", "url": "ftp://h/x"}}, r"at model/url"),
    ({"created_at": "yesterday"}, r"created_at: 'yesterday' is not an ISO 8601"),
    ({"created_at": "2026-11-29T16:30:00"}, r"has no time zone"),
    ({"query": "   "}, r"the query is empty"),
])
def test_schema_violations_fail_with_one_clear_message(tmp_path, change, message):
    with pytest.raises(RagsecError, match=message):
        import_trace(write(tmp_path, incident(**change)), "incident")


def test_hostile_files_are_refused_clearly(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_IMPORT_BYTES + 1)  # sparse: costs no disk
    cases = {
        big: "over 50 MB",
        write(tmp_path, "[1, 2", "torn.json"): "invalid JSON",
        write(tmp_path, '{"a": NaN}', "nan.json"): "NaN is not a JSON number",
        write(tmp_path, "[" * 100_000 + "]" * 100_000, "deep.json"): "nested too deeply",
        tmp_path / "missing.json": "not found",
        tmp_path: "not found",  # a folder
    }
    (tmp_path / "latin1.json").write_bytes('{"query": "caf\xe9"}'.encode("latin-1"))
    cases[tmp_path / "latin1.json"] = "not valid UTF-8"
    for path, message in cases.items():
        with pytest.raises(RagsecError, match=message):
            import_trace(path, "incident")
    with pytest.raises(RagsecError, match="finite number"):
        import_trace(write(tmp_path, json.dumps(incident()).replace("0.83", "1e999")), "incident")
    # Lone surrogates (valid JSON escapes) become U+FFFD, one for one: the store stays UTF-8.
    doc = incident()
    raw = json.dumps(doc).replace("Sydney, home", "Sydney\\ud800 home")  # in the passage and in the message
    t = import_trace(write(tmp_path, raw))
    assert "\ufffd" in t.hits[0].text and t.prompt[t.spans[0].start : t.spans[0].end] == t.hits[0].text
    TraceStore(tmp_path / "s.jsonl").append(t)


def test_formats_live_in_one_place_and_the_cli_offers_them():
    import argparse

    assert json_schema()["properties"]["origin"]["properties"]["format"]["enum"] == list(IMPORT_FORMATS)
    sub = argparse.ArgumentParser().add_subparsers()
    add_import_parser(sub)
    fmt = next(a for a in sub.choices["import"]._actions if a.dest == "format")
    assert tuple(fmt.choices) == IMPORT_FORMATS
    assert incident_schema()["$schema"].endswith("2020-12/schema")


def test_redact_url_strips_userinfo_secret_parameters_and_fragments():
    assert redact_url("https://u:p@Host.example:8443/v1?api-key=1&x-amz-signature=2&access_token=3&region=eu#tok") \
        == "https://host.example:8443/v1?region=eu"
    assert redact_url("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert redact_url("http://h:notaport/") == ""


# ---------------------------------------------------------------- trace schema version 2

def test_version_1_records_still_load_and_validate(tmp_path, make_trace):
    v1 = make_trace().to_dict()
    for key in ("messages", "prompt_message", "origin"):
        del v1[key]
    for h in v1["hits"]:
        del h["score"]
    v1["schema_version"] = 1
    validate(v1)
    store = TraceStore(tmp_path / "old.jsonl")
    store.path.write_text(json.dumps(v1) + "\n", encoding="utf-8")
    t = store.get(v1["trace_id"])
    assert (t.schema_version, t.messages, t.prompt_message, t.origin, t.hits[0].score) == (2, [], None, {}, None)
    validate(t.to_dict())  # read as version 2
    for bad, message in [({"model": {k: v for k, v in v1["model"].items() if k != "quantize"}}, "'quantize' is a required"),
                         ({"retrieval": v1["retrieval"] | {"alpha": None}}, "None is not of type 'number'"),
                         ({"messages": []}, "schema")]:
        with pytest.raises(RagsecError, match=message):
            validate(v1 | bad)


def test_version_2_invariants_of_the_prompt_message(make_trace):
    t = make_trace()
    d = t.to_dict()
    validate(d | {"model": {k: v for k, v in d["model"].items() if k != "quantize"}, "retrieval": d["retrieval"] | {"alpha": None}})
    with pytest.raises(RagsecError, match="'messages' is a required property"):
        validate({k: v for k, v in d.items() if k != "messages"})
    chat = d | {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": t.prompt}], "prompt_message": 1}
    validate(chat)
    with pytest.raises(RagsecError, match="prompt_message 2 is not one of its 2 messages"):
        validate(chat | {"prompt_message": 2})
    with pytest.raises(RagsecError, match="prompt is not the content of message 0"):
        validate(chat | {"prompt_message": 0})
    with pytest.raises(RagsecError, match="do not reproduce"):
        validate(d | {"spans": [d["spans"][0] | {"hit": 5}]})
    c = Trace.from_dict(chat)
    assert c.messages_for("masked") == [{"role": "system", "content": "s"}, {"role": "user", "content": "masked"}]
    assert c.messages[1]["content"] == t.prompt  # a copy: the logged messages are untouched
    with pytest.raises(RagsecError, match="holds no chat messages"):
        t.messages_for("masked")


# ---------------------------------------------------------------- OpenInference spans

def otel() -> Any:
    """The OpenTelemetry SDK parts (the tests' [endpoint] tooling); skipped where they are not installed."""
    pytest.importorskip("opentelemetry.sdk.trace")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")
    pytest.importorskip("google.protobuf.json_format")
    from opentelemetry.sdk.trace import TracerProvider

    return TracerProvider


class SpanFiles:
    """A tracer whose finished spans go to the SDK's ConsoleSpanExporter (form b, pretty JSON back to back)
    and, on `close`, through the OTLP encoder to OTLP/JSON lines (form a) as protobuf writes them (base64
    ids) and as the Collector's file exporter writes them (hex ids)."""

    def __init__(self, tmp_path: Path) -> None:
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.dir = tmp_path
        self.sdk_file = (tmp_path / "spans.sdk.json").open("w", encoding="utf-8")
        self.memory = InMemorySpanExporter()
        self.provider = otel()()
        self.provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=self.sdk_file)))
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.tracer = self.provider.get_tracer("ragsec-test")

    def close(self) -> dict[str, Path]:
        from google.protobuf.json_format import MessageToDict, MessageToJson
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        self.provider.force_flush()
        self.sdk_file.close()
        request = encode_spans(self.memory.get_finished_spans())
        b64 = self.dir / "spans.otlp-b64.jsonl"
        b64.write_text(MessageToJson(request, indent=None) + "\n", encoding="utf-8")
        collector = MessageToDict(request)
        for rs in collector["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for sp in ss["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in sp:
                            sp[key] = base64.b64decode(sp[key]).hex()
        hexed = self.dir / "spans.otlp.jsonl"
        hexed.write_text(json.dumps(collector) + "\n", encoding="utf-8")
        return {"sdk": Path(self.sdk_file.name), "otlp-b64": b64, "otlp": hexed}


def retriever_span(tracer: Any, docs: list[tuple[str, str, float]], query: str = QUERY) -> None:
    """A RETRIEVER span as a RAG framework's instrumentation writes it (the OpenAI one covers only the LLM)."""
    from openinference.semconv.trace import DocumentAttributes as D
    from openinference.semconv.trace import SpanAttributes as A

    with tracer.start_as_current_span("retrieve") as span:
        span.set_attribute(A.OPENINFERENCE_SPAN_KIND, "RETRIEVER")
        span.set_attribute(A.INPUT_VALUE, query)
        for i, (doc_id, text, score) in enumerate(docs):
            prefix = f"{A.RETRIEVAL_DOCUMENTS}.{i}."
            span.set_attribute(prefix + D.DOCUMENT_ID, doc_id)
            span.set_attribute(prefix + D.DOCUMENT_CONTENT, text)
            span.set_attribute(prefix + D.DOCUMENT_SCORE, score)
            span.set_attribute(prefix + D.DOCUMENT_METADATA, json.dumps({"title": f"title of {doc_id}"}))


def llm_span(tracer: Any, messages: list[dict[str, str]], answer: str) -> None:
    """An LLM span with the attributes the OpenAI instrumentation records (see the endpoint test)."""
    from openinference.semconv.trace import MessageAttributes as M
    from openinference.semconv.trace import SpanAttributes as A

    with tracer.start_as_current_span("ChatCompletion") as span:
        span.set_attribute(A.OPENINFERENCE_SPAN_KIND, "LLM")
        span.set_attribute(A.LLM_MODEL_NAME, "support-bot-7b")
        span.set_attribute(A.LLM_INVOCATION_PARAMETERS, json.dumps({"max_tokens": 24, "temperature": 0}))
        span.set_attribute(A.LLM_TOKEN_COUNT_PROMPT, 57)
        for i, m in enumerate(messages):
            span.set_attribute(f"{A.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_ROLE}", m["role"])
            span.set_attribute(f"{A.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_CONTENT}", m["content"])
        span.set_attribute(f"{A.LLM_OUTPUT_MESSAGES}.0.{M.MESSAGE_ROLE}", "assistant")
        span.set_attribute(f"{A.LLM_OUTPUT_MESSAGES}.0.{M.MESSAGE_CONTENT}", answer)


def rag_request(tracer: Any, ask: Any) -> None:
    """One RAG request: a CHAIN span around retrieval and the model call (`ask()` makes the LLM span)."""
    from openinference.semconv.trace import SpanAttributes as A

    with tracer.start_as_current_span("rag") as chain:
        chain.set_attribute(A.OPENINFERENCE_SPAN_KIND, "CHAIN")
        chain.set_attribute(A.INPUT_VALUE, QUERY)
        retriever_span(tracer, [("kb-7#2", P1, 0.83), ("kb-7#5", P2, 0.71)])
        ask()


MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_prompt(P1, P2)}]


@pytest.mark.parametrize("form", ["sdk", "otlp", "otlp-b64"])
def test_openinference_span_files_import_in_every_form(tmp_path, form):
    files = SpanFiles(tmp_path)
    rag_request(files.tracer, lambda: llm_span(files.tracer, MESSAGES, "Sydney"))
    path = files.close()[form]
    t = import_trace(path)  # the format is detected
    validate(t.to_dict())
    assert t.origin["format"] == "openinference" and len(t.origin["trace_id"]) == 32 and len(t.origin["span_id"]) == 16
    assert t.query == QUERY and t.answer == "Sydney" and t.messages == MESSAGES and t.prompt_message == 1
    assert [(h.chunk_id, h.score, h.title) for h in t.hits] == [("kb-7#2", 0.83, "title of kb-7#2"), ("kb-7#5", 0.71, "title of kb-7#5")]
    assert [t.prompt[s.start : s.end] for s in t.spans] == [P1, P2] and t.system == SYSTEM
    assert t.model["id"] == "support-bot-7b" and t.model["settings"]["max_new_tokens"] == 24
    assert t.model["endpoint"] == {"model": "support-bot-7b", "mode": "chat"}
    assert t.timing["prompt_tokens"] == 57 and t.timing["generation_ms"] >= 0
    assert t.signals.par and t.signals.par_mode == "label-free"


def test_openinference_completions_span_with_a_rewrapped_passage_and_a_json_chain_input(tmp_path):
    from openinference.semconv.trace import ChoiceAttributes as C
    from openinference.semconv.trace import PromptAttributes as P
    from openinference.semconv.trace import SpanAttributes as A

    files = SpanFiles(tmp_path)
    prompt = f"{SYSTEM}\n\nContexts:\n[1] {P1.replace(' home', chr(10) + 'home')}\nQuestion: {QUERY}\nAnswer:"
    with files.tracer.start_as_current_span("rag") as chain:
        chain.set_attribute(A.OPENINFERENCE_SPAN_KIND, "CHAIN")
        chain.set_attribute(A.INPUT_VALUE, json.dumps({"question": QUERY, "user": "u-17"}))
        chain.set_attribute(A.INPUT_MIME_TYPE, "application/json")
        retriever_span(files.tracer, [("kb-7#2", P1, 0.83)], query="")  # no query on the retriever
        with files.tracer.start_as_current_span("Completion") as span:
            span.set_attribute(A.OPENINFERENCE_SPAN_KIND, "LLM")
            span.set_attribute(f"{A.LLM_PROMPTS}.0.{P.PROMPT_TEXT}", prompt)
            span.set_attribute(f"{A.LLM_CHOICES}.0.{C.COMPLETION_TEXT}", " Sydney")
    t = import_trace(files.close()["sdk"], "openinference")
    assert t.query == QUERY and t.answer == " Sydney" and t.prompt == prompt and t.prompt_message is None
    assert t.origin["normalised"] and t.hits[0].text == P1.replace(" home", "\nhome") == t.prompt[t.spans[0].start : t.spans[0].end]
    assert t.model == {"id": "unknown", "settings": {"max_new_tokens": 64, "do_sample": False, "temperature": 0.0, "seed": 0}}


def test_several_interactions_need_select_and_spans_without_a_retriever_fail(tmp_path, capsys):
    files = SpanFiles(tmp_path)
    for answer in ("Sydney", "Canberra"):
        rag_request(files.tracer, lambda a=answer: llm_span(files.tracer, MESSAGES, a))
    with files.tracer.start_as_current_span("no-retrieval"):
        llm_span(files.tracer, [{"role": "user", "content": "hi"}], "hello")
    path = files.close()["otlp"]
    with pytest.raises(RagsecError, match=r"holds 3 interactions \(LLM spans\); choose one with --select") as err:
        import_trace(path)
    ids = str(err.value).rsplit(": ", 1)[1].split(", ")
    assert len(ids) == 3 and all(len(i) == 49 and i[32] == "/" for i in ids)
    assert import_trace(path, select=ids[1]).answer == "Canberra"
    assert import_trace(path, select=ids[0].split("/")[0]).answer == "Sydney"  # a trace id
    assert import_trace(path, select="0x" + ids[1].split("/")[1].upper()).answer == "Canberra"  # an SDK-style span id
    with pytest.raises(RagsecError, match="has no RETRIEVER span"):
        import_trace(path, select=ids[2])
    with pytest.raises(RagsecError, match="no such trace or LLM span"):
        import_trace(path, select="feedface")
    store = tmp_path / "s.jsonl"
    assert cli(str(path), "--format", "openinference", "--select", ids[1], "--store", str(store)) == 0
    assert TraceStore(store).get(capsys.readouterr().out.split()[0]).answer == "Canberra"
    assert cli(str(path), "--store", str(store)) == 2 and "3 interactions" in capsys.readouterr().err
    with pytest.raises(RagsecError, match="incident file holds one"):
        import_trace(write(tmp_path, incident()), select=ids[0])
    with pytest.raises(RagsecError, match="no spans"):
        import_trace(write(tmp_path, '{"resourceMetrics": []}\n', "metrics.jsonl"), "openinference")


@pytest.mark.endpoint
@pytest.mark.model
def test_openinference_spans_of_a_real_openai_call_import(tmp_path, llama_server):
    """The real instrumentation around a real OpenAI client call to the real llama.cpp server: the
    imported trace holds exactly the messages the client sent and the answer the server returned."""
    pytest.importorskip("openai")
    pytest.importorskip("openinference.instrumentation.openai")
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor

    files = SpanFiles(tmp_path)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=files.provider)
    replies = []
    try:
        client = openai.OpenAI(base_url=llama_server.base_url, api_key=os.environ.get("OPENAI_API_KEY", "none"))

        def ask() -> None:
            replies.append(client.chat.completions.create(model=llama_server.model, messages=MESSAGES,
                                                          max_tokens=16, temperature=0, seed=0))

        rag_request(files.tracer, ask)
    finally:
        instrumentor.uninstrument()
    paths = files.close()
    answer = replies[0].choices[0].message.content or ""
    for form in ("sdk", "otlp"):
        t = import_trace(paths[form])
        validate(t.to_dict())
        assert t.messages == MESSAGES and t.prompt_message == 1 and t.answer == answer
        assert [t.prompt[s.start : s.end] for s in t.spans] == [P1, P2]
        assert t.model["id"] == replies[0].model and t.model["settings"]["max_new_tokens"] == 16 and t.model["settings"]["seed"] == 0
        assert t.timing["prompt_tokens"] == replies[0].usage.prompt_tokens > 0
        assert t.signals == compute_signals(answer, {0: P1, 1: P2}, Labels())
