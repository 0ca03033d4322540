"""Importing a RAG interaction that happened elsewhere (a deployment's log) as a Pass-0 trace.

An analyst rarely has a ragsec run of the incident; they have what the deployment logged: the query, the
passages it retrieved, the prompt or chat messages it sent and the answer. This module is the part every
import format shares: the `Interaction` a reader produces, the incident JSON format of our own
(`incident_schema.json`), and `to_trace`, which anchors each used passage in the prompt and builds a
validated trace that Pass-1 can replay. The OpenInference span reader is `openinference.py`.

Everything in an imported file is attacker-controlled: it is read size-capped, never evaluated, every
string has its lone surrogates replaced (one character for one, so offsets hold), and every failure is
one `RagsecError` naming what was wrong.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import check_query
from ragsec_core._util.safeio import decode_utf8, exists, parse_json, scrub
from ragsec_core._util.urls import redact_url
from ragsec_core.data.trace import Labels, PromptSpan, Trace, TraceHit, compute_signals, new_trace_id, now_iso, validate

IMPORT_FORMATS = ("incident", "openinference")  # `ragsec import --format`; the trace schema's origin.format
MAX_IMPORT_BYTES = 50 * 2**20
MAX_PASSAGES = 1000
MAX_MESSAGES = 1000
IMPORT_MAX_NEW_TOKENS = 64  # replay length of an imported trace whose log does not say (ragsec's own runs use 32)
INCIDENT_SCHEMA_FILE = Path(__file__).with_name("incident_schema.json")


@dataclass
class Passage:
    id: str
    text: str
    score: float | None = None  # the deployment's own retrieval score
    title: str = ""
    used: bool = True  # placed in the prompt


@dataclass
class Interaction:
    """One logged RAG interaction, whatever format it came in. Exactly one of `messages` (a chat request)
    and `prompt` (the rendered text sent to a completions endpoint) is set."""

    query: str
    passages: list[Passage]
    answer: str
    messages: list[dict[str, str]] | None = None
    prompt: str | None = None
    system: str = ""
    model_name: str | None = None
    model_url: str | None = None
    labels: Labels = field(default_factory=Labels)
    created_at: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # logged max_new_tokens / seed over the defaults
    timing: dict[str, float] = field(default_factory=dict)
    model_extra: dict[str, Any] = field(default_factory=dict)  # e.g. the deployment's invocation parameters
    origin_extra: dict[str, Any] = field(default_factory=dict)  # e.g. the span ids it was read from


@dataclass(frozen=True)
class ImportFile:
    name: str  # base name only: a trace never records where on the analyst's disk the file was
    sha256: str
    text: str


# ---------------------------------------------------------------- reading

def read_import_file(path: str | Path) -> ImportFile:
    """The file's UTF-8 text and hash, refusing what is not a regular file or is over the size limit
    (read at most one byte past it, so a device or a growing file cannot make it read forever)."""
    p = Path(path).expanduser()
    if not exists(p, kind="file"):
        raise RagsecError(f"import file not found: '{p}'")
    try:
        with p.open("rb") as fh:
            data = fh.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise RagsecError(f"cannot read '{p}': {exc.strerror or exc}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise RagsecError(f"'{p.name}' is over {MAX_IMPORT_BYTES // 2**20} MB; split it or cut it to the interaction")
    return ImportFile(p.name, hashlib.sha256(data).hexdigest(), decode_utf8(data, p.name, "JSON"))


def text_of(value: Any) -> str:
    """A string from the file, safe to store (lone surrogates become U+FFFD, same length)."""
    return scrub(value if isinstance(value, str) else str(value))


def finite_score(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RagsecError(f"{where}: the score must be a finite number (got {str(value)[:40]})")
    return float(value)


def utc_time(value: str, where: str) -> str:
    """An ISO 8601 timestamp with its zone, as UTC in the trace's own form."""
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise RagsecError(f"{where}: '{value[:40]}' is not an ISO 8601 date-time") from None
    if t.tzinfo is None:
        raise RagsecError(f"{where}: '{value[:40]}' has no time zone (add Z or +00:00)")
    return t.astimezone(UTC).isoformat(timespec="seconds")


def check_passage_count(n: int, what: str) -> None:
    if n > MAX_PASSAGES:
        raise RagsecError(f"{what} has {n} passages; at most {MAX_PASSAGES} are imported")


# ---------------------------------------------------------------- the incident format

@lru_cache(maxsize=1)
def incident_schema() -> dict[str, Any]:
    return json.loads(INCIDENT_SCHEMA_FILE.read_text(encoding="utf-8"))


def parse_incident(source: ImportFile) -> Interaction:
    """An incident JSON (`incident_schema.json`) as an Interaction; one clear error for the first problem."""
    import jsonschema

    doc = parse_json(source.text, f"'{source.name}'", strict=True)  # NaN would make the stored trace invalid JSON
    if not isinstance(doc, dict):
        raise RagsecError(f"'{source.name}': an incident is one JSON object (got {type(doc).__name__})")
    if isinstance(doc.get("passages"), list):
        check_passage_count(len(doc["passages"]), f"'{source.name}'")
    if ("messages" in doc) == ("prompt" in doc):
        raise RagsecError(f"'{source.name}': give exactly one of 'messages' (a chat request) and 'prompt' "
                          "(the text sent to a completions endpoint)")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(incident_schema()).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise RagsecError(f"'{source.name}' is not a valid incident at {where}: {error.message[:300]}")
    passages = [Passage(text_of(p["id"]), text_of(p["text"]), finite_score(p.get("score"), f"passage {p['id']}"),
                        text_of(p.get("title", "")), bool(p.get("used", True))) for p in doc["passages"]]
    model, labels = doc.get("model", {}), doc.get("labels", {})
    return Interaction(
        query=text_of(doc["query"]),
        passages=passages,
        answer=text_of(doc["answer"]),
        messages=[{"role": text_of(m["role"]), "content": text_of(m["content"])} for m in doc["messages"]]
        if "messages" in doc else None,
        prompt=text_of(doc["prompt"]) if "prompt" in doc else None,
        system=text_of(doc.get("system", "")),
        model_name=text_of(model["name"]) if "name" in model else None,
        model_url=text_of(model["url"]) if "url" in model else None,
        labels=Labels(None, [text_of(a) for a in labels.get("answers", [])],
                      None if labels.get("target") is None else text_of(labels["target"])),
        created_at=utc_time(doc["created_at"], "created_at") if "created_at" in doc else None,
    )


# ---------------------------------------------------------------- anchoring

_SPACE = re.compile(r"\s+")


def collapse(text: str) -> tuple[str, list[int]]:
    """`text` with each run of whitespace as one space, and for each of its characters the offset in
    `text` it came from (a collapsed run maps to the run's first character)."""
    out: list[str] = []
    where: list[int] = []
    pos = 0
    for m in _SPACE.finditer(text):
        out.append(text[pos : m.start()])
        where.extend(range(pos, m.start()))
        out.append(" ")
        where.append(m.start())
        pos = m.end()
    out.append(text[pos:])
    where.extend(range(pos, len(text)))
    return "".join(out), where


class Haystack:
    """One prompt text, searched for passages exactly or through the whitespace-collapsing offset map."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._collapsed: tuple[str, list[int]] | None = None

    def find(self, needle: str, cursor: int) -> tuple[int, int, bool] | None:
        """(start, end, normalised) of `needle` in the text: the first occurrence at or after `cursor`,
        else the first anywhere; exact matches before whitespace-normalised ones."""
        for at in (cursor, 0):
            pos = self.text.find(needle, at)
            if pos >= 0:
                return pos, pos + len(needle), False
        short = _SPACE.sub(" ", needle).strip()
        if not short:
            return None
        if self._collapsed is None:
            self._collapsed = collapse(self.text)
        flat, where = self._collapsed
        for at in (bisect.bisect_left(where, cursor), 0):
            pos = flat.find(short, at)
            if pos >= 0:  # `short` starts and ends on non-space, so both ends map to real characters
                return where[pos], where[pos + len(short) - 1] + 1, True
        return None

    def anchor(self, passages: list[Passage]) -> list[tuple[int, int, bool]] | None:
        """Every passage located in turn (each search starts where the previous passage ended), or None."""
        out, cursor = [], 0
        for p in passages:
            found = self.find(p.text, cursor)
            if found is None:
                return None
            out.append(found)
            cursor = found[1]
        return out


def anchor_in_messages(messages: list[dict[str, str]], passages: list[Passage],
                       ids: list[str]) -> tuple[int, list[tuple[int, int, bool]]]:
    """The one message that holds every used passage (user messages first, the last first), with the
    passages' offsets in it; else the error that says which passage (by `ids`) is missing or how they
    are split."""
    order = sorted(range(len(messages)), key=lambda i: (messages[i]["role"] != "user", -i))
    stacks = {i: Haystack(messages[i]["content"]) for i in order}
    for i in order:
        found = stacks[i].anchor(passages)
        if found is not None:
            return i, found
    holders = {pid: [i for i in order if stacks[i].find(p.text, 0) is not None] for p, pid in zip(passages, ids)}
    missing = [pid for pid, held in holders.items() if not held]
    if missing:
        raise not_found(missing[0], "any message")
    where = ", ".join(f"{pid} in message {min(held)}" for pid, held in holders.items())
    raise RagsecError(f"the used passages are not all in one message ({where}): ragsec masks one message and "
                      "sends the others as they were")


def not_found(passage_id: str, where: str) -> RagsecError:
    return RagsecError(f"passage '{passage_id}' is not in {where}, neither exactly nor after whitespace "
                       "normalisation (in an incident file, mark a passage that was not sent \"used\": false)")


def unique_ids(ids: list[str]) -> list[str]:
    """Passage ids made unique ('a', 'a' -> 'a', 'a~1'), since spans and Pass-1 refer to hits by id."""
    taken, out = set(ids), []
    seen: set[str] = set()
    for pid in ids:
        base = pid or "passage"
        new, n = base, 0
        while new in seen or (n and new in taken):
            n += 1
            new = f"{base}~{n}"
        seen.add(new)
        out.append(new)
    return out


# ---------------------------------------------------------------- the trace

def to_trace(it: Interaction, fmt: str, source: ImportFile) -> Trace:
    """A validated Pass-0 trace of `it`: hits in the logged order, spans of the used passages in the prompt
    (the prompt's own characters, so `prompt[start:end] == hit.text` even after a normalised match)."""
    query = check_query(it.query)
    check_passage_count(len(it.passages), "the interaction")
    if not it.passages:
        raise RagsecError("the interaction has no passages: there is nothing to trace back to")
    chunk_ids = unique_ids([p.id for p in it.passages])  # a document's id may repeat; a hit's may not
    used = [i for i, p in enumerate(it.passages) if p.used]
    if not used:
        raise RagsecError("no passage is marked as used: Pass-1 can only trace passages that were in the prompt")
    wanted = [it.passages[i] for i in used]
    messages: list[dict[str, str]] = []
    prompt_message: int | None = None
    if it.messages is not None:
        if not it.messages or len(it.messages) > MAX_MESSAGES:
            raise RagsecError(f"the chat request must have 1 to {MAX_MESSAGES} messages (got {len(it.messages)})")
        messages = [{"role": m["role"], "content": m["content"]} for m in it.messages]
        prompt_message, found = anchor_in_messages(messages, wanted, [chunk_ids[i] for i in used])
        prompt = messages[prompt_message]["content"]
        system = next((m["content"] for j, m in enumerate(messages)
                       if m["role"] in ("system", "developer") and j != prompt_message), it.system)
    else:
        prompt, system = it.prompt or "", it.system
        anchored = Haystack(prompt).anchor(wanted)
        if anchored is None:
            stack = Haystack(prompt)
            raise not_found(next(chunk_ids[i] for i in used if stack.find(it.passages[i].text, 0) is None), "the prompt")
        found = anchored
    where = dict(zip(used, found))
    hits = []
    for i, p in enumerate(it.passages):
        text = prompt[where[i][0] : where[i][1]] if i in where else p.text
        hits.append(TraceHit(i + 1, p.id, chunk_ids[i], p.title, text, 0, len(text), 0.0, 0.0, 0.0, 0.0, 0.0, score=p.score))
    spans = [PromptSpan(i, hits[i].chunk_id, where[i][0], where[i][1]) for i in used]
    trace = Trace(
        trace_id=new_trace_id(),
        created_at=it.created_at or now_iso(),
        query=query,
        model=model_record(it),
        retrieval={
            "corpus": "import", "corpus_source": source.name,
            "corpus_hash": hashlib.sha256("".join(h.text for h in hits).encode("utf-8")).hexdigest(),
            "embedder": "unknown (deployment)", "k": len(hits), "alpha": None, "use": len(used), "scores": "imported",
        },
        hits=hits,
        used=used,
        system=system,
        prompt=prompt,
        spans=spans,
        answer=it.answer,
        signals=compute_signals(it.answer, {i: hits[i].text for i in used}, it.labels),
        labels=it.labels,
        timing={"retrieval_ms": 0.0, "generation_ms": 0.0, "prompt_tokens": 0} | it.timing,
        messages=messages,
        prompt_message=prompt_message,
        origin={"kind": "import", "format": fmt, "file": source.name, "sha256": source.sha256,
                "normalised": any(f[2] for f in found), "imported_at": now_iso()} | it.origin_extra,
    )
    validate(trace.to_dict())
    return trace


def model_record(it: Interaction) -> dict[str, Any]:
    """The trace's `model`: the deployment's name, greedy replay settings, and the endpoint it names (its
    URL without credentials), so `ragsec trace` can replay where the incident happened."""
    settings = {"max_new_tokens": IMPORT_MAX_NEW_TOKENS, "do_sample": False, "temperature": 0.0, "seed": 0} | it.settings
    record: dict[str, Any] = {"id": it.model_name or "unknown", "settings": settings} | it.model_extra
    if it.model_name or it.model_url:
        endpoint: dict[str, Any] = {"model": it.model_name or "unknown",
                                    "mode": "chat" if it.messages is not None else "completions"}
        if it.model_url:
            url = redact_url(it.model_url)
            if not url.startswith(("http://", "https://")):
                raise RagsecError("the model URL must be an http(s) URL")  # not echoed: it may hold a secret
            endpoint["url"] = url
        record |= {"backend": "endpoint", "endpoint": endpoint}
    return record
