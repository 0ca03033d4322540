"""Reading OpenInference spans (the OpenTelemetry conventions of RAG and LLM instrumentation) as an
`Interaction`, and `import_trace`, the one entry point of `ragsec import` for every format.

A deployment instrumented with OpenInference (Phoenix, the openinference-instrumentation-* packages) logs
each retrieval as a RETRIEVER span with its documents and each model call as an LLM span with the
messages as sent; spans of one request share a trace id. Two file shapes are read, both as the exporters
write them: OTLP/JSON (one `{"resourceSpans": ...}` object per line, the OpenTelemetry Collector's file
exporter; attributes as typed `{"key", "value"}` pairs, ids hex or base64) and the Python SDK's
`ReadableSpan.to_json()` objects (flat attributes, `0x` ids), one per line or pretty-printed one after
another as ConsoleSpanExporter writes them. Attribute names are the semantic-convention package's own.

An interaction is one LLM span, with the RETRIEVER span of its trace that ran last before it (the passages
the model read); a file with several needs `select`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openinference.semconv.trace import (
    ChoiceAttributes,
    DocumentAttributes,
    MessageAttributes,
    MessageContentAttributes,
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    PromptAttributes,
    SpanAttributes,
)

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.safeio import parse_json
from ragsec_core.data.incident import (
    IMPORT_FORMATS,
    MAX_MESSAGES,
    ImportFile,
    Interaction,
    Passage,
    check_passage_count,
    finite_score,
    parse_incident,
    read_import_file,
    text_of,
    to_trace,
)
from ragsec_core.data.trace import Labels, Trace

LLM = OpenInferenceSpanKindValues.LLM.value
RETRIEVER = OpenInferenceSpanKindValues.RETRIEVER.value
CHAIN = OpenInferenceSpanKindValues.CHAIN.value
MAX_LISTED = 20  # interactions named in the "choose one" error
_INDEXED = re.compile(r"(\d{1,9})\.(.+)")


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    attributes: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.attributes.get(SpanAttributes.OPENINFERENCE_SPAN_KIND, "")).upper()

    def ms(self) -> float:
        return max(0.0, (self.end_ns - self.start_ns) / 1e6) if self.start_ns and self.end_ns else 0.0


# ---------------------------------------------------------------- the two file shapes

def json_objects(text: str, what: str) -> list[Any]:
    """Every JSON value in `text`, whether one per line or concatenated (pretty-printed) back to back."""
    decoder, pos = json.JSONDecoder(parse_constant=lambda c: None), 0
    out: list[Any] = []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise RagsecError(f"{what}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
        except RecursionError:
            raise RagsecError(f"{what}: JSON nested too deeply") from None
        out.extend(value if isinstance(value, list) else [value])


def hex_id(value: Any, size: int) -> str:
    """A trace or span id as lower-case hex: OTLP/JSON writes hex (the spec) or base64 (protobuf's own
    JSON mapping), the SDK writes 0x-prefixed hex."""
    s = text_of(value or "").strip()
    s = s[2:] if s[:2].lower() == "0x" else s
    if re.fullmatch(f"[0-9a-fA-F]{{{2 * size}}}", s):
        return s.lower()
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    return raw.hex() if len(raw) == size else s


def otlp_value(v: Any) -> Any:
    """An OTLP AnyValue (`{"stringValue": ...}`, `{"intValue": "44"}`, arrays, key-value lists) as Python."""
    if not isinstance(v, dict):
        return None
    if "stringValue" in v:
        return v["stringValue"]
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in v:
        return v["doubleValue"] if isinstance(v["doubleValue"], (int, float)) else None
    if "arrayValue" in v:
        return [otlp_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return {str(kv.get("key")): otlp_value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values", [])
                if isinstance(kv, dict)}
    return None


def _nanos(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _iso_nanos(value: Any) -> int | None:
    try:
        t = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    t = t if t.tzinfo else t.replace(tzinfo=UTC)
    return int(t.timestamp() * 1e6) * 1000


def read_spans(text: str, what: str) -> list[Span]:
    """All spans of an OTLP/JSON or SDK-JSON file; other records (metrics, logs) are skipped."""
    spans: list[Span] = []
    for obj in json_objects(text, what):
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("resourceSpans"), list):
            for rs in obj["resourceSpans"]:
                scopes = (rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")) if isinstance(rs, dict) else None
                for ss in scopes if isinstance(scopes, list) else []:
                    for sp in (ss.get("spans") or []) if isinstance(ss, dict) else []:
                        if isinstance(sp, dict):
                            attrs = {str(a.get("key")): otlp_value(a.get("value")) for a in sp.get("attributes") or []
                                     if isinstance(a, dict)}
                            spans.append(Span(hex_id(sp.get("traceId"), 16), hex_id(sp.get("spanId"), 8),
                                              hex_id(sp.get("parentSpanId"), 8) or None, text_of(sp.get("name", "")),
                                              _nanos(sp.get("startTimeUnixNano")), _nanos(sp.get("endTimeUnixNano")), attrs))
        elif isinstance(obj.get("context"), dict) and isinstance(obj.get("attributes"), dict):
            ctx = obj["context"]
            spans.append(Span(hex_id(ctx.get("trace_id"), 16), hex_id(ctx.get("span_id"), 8),
                              hex_id(obj.get("parent_id"), 8) or None, text_of(obj.get("name", "")),
                              _iso_nanos(obj.get("start_time")), _iso_nanos(obj.get("end_time")), dict(obj["attributes"])))
    return spans


# ---------------------------------------------------------------- attributes to an interaction

def indexed(attrs: dict[str, Any], prefix: str, limit: int, what: str) -> list[dict[str, Any]]:
    """`prefix.{i}.rest` attributes as one dict per i (in index order): the flattened lists of the
    conventions (`retrieval.documents.0.document.content`)."""
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith(prefix + ".") and (m := _INDEXED.fullmatch(key[len(prefix) + 1 :])):
            i = int(m.group(1))
            if i >= limit:
                raise RagsecError(f"{what}: more than {limit} entries in {prefix}")
            groups.setdefault(i, {})[m.group(2)] = value
    return [groups[i] for i in sorted(groups)]


def message_text(m: dict[str, Any]) -> str:
    """A message's content; a multi-part content's text parts, joined."""
    if m.get(MessageAttributes.MESSAGE_CONTENT) is not None:
        return text_of(m[MessageAttributes.MESSAGE_CONTENT])
    parts = indexed(m, MessageAttributes.MESSAGE_CONTENTS, MAX_MESSAGES, "message")
    return "".join(text_of(p.get(MessageContentAttributes.MESSAGE_CONTENT_TEXT) or "") for p in parts)


def passages_of(span: Span, what: str) -> list[Passage]:
    docs = indexed(span.attributes, SpanAttributes.RETRIEVAL_DOCUMENTS, 1 << 20, what)
    check_passage_count(len(docs), what)
    out = []
    for i, d in enumerate(docs):
        content = d.get(DocumentAttributes.DOCUMENT_CONTENT)
        if not isinstance(content, str) or not content:
            raise RagsecError(f"{what}: retrieved document {i} has no {DocumentAttributes.DOCUMENT_CONTENT}")
        pid = d.get(DocumentAttributes.DOCUMENT_ID)
        out.append(Passage(text_of(pid) if pid not in (None, "") else f"doc-{i}", text_of(content),
                           finite_score(d.get(DocumentAttributes.DOCUMENT_SCORE), f"{what} document {i}"),
                           _title(d.get(DocumentAttributes.DOCUMENT_METADATA))))
    return out


def _title(metadata: Any) -> str:
    """A `title` in the document's metadata (a JSON string by the conventions), if there is one."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata[:100_000])
        except (ValueError, RecursionError):
            return ""
    title = metadata.get("title") if isinstance(metadata, dict) else None
    return text_of(title) if isinstance(title, str) else ""


def query_of(spans: list[Span]) -> str | None:
    """`input.value` of the retriever, else of the outermost chain (a JSON input: its query/question)."""
    for s in spans:
        value = s.attributes.get(SpanAttributes.INPUT_VALUE)
        if not isinstance(value, str) or not value.strip():
            continue
        if s.attributes.get(SpanAttributes.INPUT_MIME_TYPE) == OpenInferenceMimeTypeValues.JSON.value:
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                parsed = None
            if isinstance(parsed, dict):
                value = next((parsed[k] for k in ("query", "question", "input") if isinstance(parsed.get(k), str)), None)
                if value is None:
                    continue
        return text_of(value)
    return None


def _invocation(attrs: dict[str, Any]) -> dict[str, Any]:
    raw = attrs.get(SpanAttributes.LLM_INVOCATION_PARAMETERS)
    try:
        params = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        return {}
    if not isinstance(params, dict):
        return {}
    return {text_of(k)[:100]: text_of(v) if isinstance(v, str) else v for k, v in list(params.items())[:50]
            if (isinstance(v, str) and len(v) <= 1000) or isinstance(v, (bool, int))
            or (isinstance(v, float) and math.isfinite(v))}


def _int(v: Any, low: int, high: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def interaction(llm: Span, trace: list[Span], what: str) -> Interaction:
    """The interaction of one LLM span and the last RETRIEVER span of its trace that started before it."""
    retrievers = [s for s in trace if s.kind == RETRIEVER]
    if not retrievers:
        raise RagsecError(f"{what}: trace {llm.trace_id} has no RETRIEVER span, so the passages the model read are "
                          "not in the file: import the interaction as an incident JSON instead")
    before = [s for s in retrievers if s.start_ns is None or llm.start_ns is None or s.start_ns <= llm.start_ns]
    retriever = (before or retrievers)[-1]
    attrs = llm.attributes
    msgs = indexed(attrs, SpanAttributes.LLM_INPUT_MESSAGES, MAX_MESSAGES, what)
    prompts = indexed(attrs, SpanAttributes.LLM_PROMPTS, MAX_MESSAGES, what)
    messages = prompt = None
    if msgs:
        messages = [{"role": text_of(m.get(MessageAttributes.MESSAGE_ROLE) or "user"), "content": message_text(m)} for m in msgs]
    elif prompts:
        prompt = text_of(prompts[0].get(PromptAttributes.PROMPT_TEXT) or "")  # a batch's first, like choices[0]
    else:
        raise RagsecError(f"{what}: LLM span {llm.span_id} records no {SpanAttributes.LLM_INPUT_MESSAGES} or "
                          f"{SpanAttributes.LLM_PROMPTS}: the prompt as sent is unknown")
    outs = indexed(attrs, SpanAttributes.LLM_OUTPUT_MESSAGES, MAX_MESSAGES, what)
    choices = indexed(attrs, SpanAttributes.LLM_CHOICES, MAX_MESSAGES, what)
    if outs:
        answer = message_text(outs[0])
    elif choices:
        answer = text_of(choices[0].get(ChoiceAttributes.COMPLETION_TEXT) or "")
    else:
        raise RagsecError(f"{what}: LLM span {llm.span_id} records no {SpanAttributes.LLM_OUTPUT_MESSAGES}: the answer is unknown")
    chains = sorted((s for s in trace if s.kind == CHAIN), key=lambda s: (s.parent_id is not None, s.start_ns or 0))
    query = query_of([retriever, *chains])
    if query is None:
        raise RagsecError(f"{what}: no {SpanAttributes.INPUT_VALUE} on the RETRIEVER or a CHAIN span: the query is unknown")
    params = _invocation(attrs)
    settings: dict[str, Any] = {}  # replay as logged: the answer's length limit and the seed (greedy decoding regardless)
    max_tokens = next((v for k in ("max_tokens", "max_completion_tokens", "max_new_tokens") if _int(v := params.get(k), 1, 4096)), None)
    if max_tokens is not None:
        settings["max_new_tokens"] = max_tokens
    if _int(params.get("seed"), 0, 2**63 - 1):
        settings["seed"] = params["seed"]
    name = attrs.get(SpanAttributes.LLM_MODEL_NAME)
    tokens = attrs.get(SpanAttributes.LLM_TOKEN_COUNT_PROMPT)
    prompt_tokens = tokens if isinstance(tokens, int) and _int(tokens, 0, 2**63 - 1) else 0
    return Interaction(
        query=query, passages=passages_of(retriever, what), answer=answer, messages=messages, prompt=prompt,
        model_name=text_of(name) if isinstance(name, str) and name else None,
        created_at=datetime.fromtimestamp(llm.start_ns / 1e9, UTC).isoformat(timespec="seconds") if llm.start_ns else None,
        settings=settings,
        timing={"retrieval_ms": round(retriever.ms(), 2), "generation_ms": round(llm.ms(), 2),
                "prompt_tokens": prompt_tokens},
        model_extra={"invocation_parameters": params} if params else {},
        origin_extra={"trace_id": llm.trace_id, "span_id": llm.span_id},
    )


def parse_openinference(source: ImportFile, select: str | None = None) -> Interaction:
    """The interaction `select` names (a trace id, an LLM span id, or TRACE/SPAN), or the file's only one."""
    what = f"'{source.name}'"
    spans = read_spans(source.text, what)
    if not spans:
        raise RagsecError(f"{what} holds no spans (expected OTLP/JSON lines or OpenTelemetry SDK span JSON)")
    llms = [s for s in spans if s.kind == LLM]
    if not llms:
        raise RagsecError(f"{what} holds {len(spans)} spans but no LLM span "
                          f"({SpanAttributes.OPENINFERENCE_SPAN_KIND} = {LLM})")
    ids = [f"{s.trace_id}/{s.span_id}" for s in llms]
    if select is not None:
        want = select.strip().lower().removeprefix("0x")
        chosen = [s for s, i in zip(llms, ids) if want in (s.trace_id, s.span_id, i)]
        if not chosen:
            raise RagsecError(f"--select {select[:80]}: no such trace or LLM span in {what} ({_listed(ids)})")
        if len(chosen) > 1:
            raise RagsecError(f"--select {select[:80]}: trace has {len(chosen)} LLM spans; select one as TRACE/SPAN "
                              f"({_listed([f'{s.trace_id}/{s.span_id}' for s in chosen])})")
        llm = chosen[0]
    elif len(llms) > 1:
        raise RagsecError(f"{what} holds {len(llms)} interactions (LLM spans); choose one with --select TRACE/SPAN: "
                          f"{_listed(ids)}")
    else:
        llm = llms[0]
    return interaction(llm, [s for s in spans if s.trace_id == llm.trace_id], what)


def _listed(ids: list[str]) -> str:
    more = f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    return ", ".join(ids[:MAX_LISTED]) + more


# ---------------------------------------------------------------- every format

def detect_format(source: ImportFile) -> str:
    """incident for one JSON object with a query and passages, else openinference (span records)."""
    try:
        doc = parse_json(source.text, source.name, strict=True)
    except RagsecError:
        return "openinference"  # several JSON values back to back: span lines
    return "incident" if isinstance(doc, dict) and "passages" in doc and "query" in doc else "openinference"


def import_trace(path: str | Path, fmt: str | None = None, select: str | None = None,
                 labels: Labels | None = None) -> Trace:
    """`ragsec import`: the file as a validated Pass-0 trace (not yet stored). `labels` (the analyst's: the
    false answer the incident is about, the correct ones) replace the file's, so PAR is judged labelled;
    spans never carry labels, and a sentence-long answer is rarely contained whole in a passage."""
    source = read_import_file(path)
    fmt = fmt or detect_format(source)
    if fmt == "incident":
        if select is not None:
            raise RagsecError("--select picks one interaction of a span file; an incident file holds one")
        it = parse_incident(source)
    elif fmt == "openinference":
        it = parse_openinference(source, select)
    else:
        raise RagsecError(f"unknown import format '{fmt}' (choose from {', '.join(IMPORT_FORMATS)})")
    if labels is not None and (labels.target or labels.answers):
        it = replace(it, labels=labels)
    return to_trace(it, fmt, source)
