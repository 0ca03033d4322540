"""The Pass-0 trace: one versioned record per query, the event signals, trigger predicates, and the store.

Every analysis (Pass-1 traceback, attention, baselines, reports, the app) reads this one schema.
The schema is also published as JSON Schema (`trace_schema.json`, documented in the README), and
`validate()` checks a record against it.

Events are defined by *adoption of retrieved text*, not by ground-truth correctness (RAGCharacter §4.2):
an analyst often has no gold answer, and in multi-poison cases masking one poison need not restore it.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragsec_core._util.atomic import append_line_atomic
from ragsec_core._util.errors import RagsecError

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("trace_schema.json")


@dataclass
class TraceHit:
    rank: int
    doc_id: str
    chunk_id: str
    title: str
    text: str
    source_start: int  # chunk text == document.text[source_start:source_end]
    source_end: int
    bm25: float
    dense: float
    hybrid: float
    bm25_norm: float
    dense_norm: float
    poison_spans: list[list[int]] = field(default_factory=list)  # gold spans, chunk-local, when known


@dataclass
class PromptSpan:
    hit: int  # index into Trace.hits
    chunk_id: str
    start: int  # prompt[start:end] == hits[hit].text
    end: int


@dataclass
class Labels:
    query_id: str | None = None
    answers: list[str] = field(default_factory=list)
    target: str | None = None


@dataclass
class Signals:
    abstained: bool  # UNK: the model declined to answer
    par: bool
    par_mode: str  # "labelled" (target known) or "label-free"
    t_asr: bool | None  # None when no target answer is known
    correct: bool | None  # None when no correct answer is known
    confusion: bool | None
    supporting: list[int]  # hit indices of used chunks that contain the event string


@dataclass
class Trace:
    trace_id: str
    created_at: str
    query: str
    model: dict[str, Any]
    retrieval: dict[str, Any]
    hits: list[TraceHit]
    used: list[int]
    system: str
    prompt: str
    spans: list[PromptSpan]
    answer: str
    signals: Signals
    labels: Labels
    timing: dict[str, float]
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            raise RagsecError(
                f"trace {d.get('trace_id', '?')} has schema version {version}; this ragsec reads version "
                f"{SCHEMA_VERSION}. Re-run the query with this version to get a current trace."
            )
        try:
            d = dict(d)
            d["hits"] = [TraceHit(**h) for h in d["hits"]]
            d["spans"] = [PromptSpan(**s) for s in d["spans"]]
            d["signals"] = Signals(**d["signals"])
            d["labels"] = Labels(**d["labels"])
            return cls(**d)
        except (KeyError, TypeError, ValueError) as exc:  # hand-edited or foreign record
            raise RagsecError(f"trace {d.get('trace_id', '?')} is malformed ({type(exc).__name__}: {exc})") from None

    def used_hits(self) -> list[TraceHit]:
        return [self.hits[i] for i in self.used]


def new_trace_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------- text matching and event signals

_ABSTAIN = re.compile(r"\b(i don ?t know|do not know|cannot answer|can ?not be determined|no information|not (mentioned|provided|stated))\b")


def normalize(text: str) -> str:
    """Case, accent-width, punctuation and article-insensitive form used by every matching rule."""
    t = unicodedata.normalize("NFKC", text).lower()
    t = re.sub(r"[^\w\s]", " ", t)
    t = re.sub(r"\b(a|an|the)\b", " ", t)
    return " ".join(t.split())


def contains_norm(haystack: str, needle: str) -> bool:
    """Whole-word containment after normalisation ('22' is not in '2424')."""
    n = normalize(needle)
    return bool(n) and f" {n} " in f" {normalize(haystack)} "


def overlaps(answer: str, reference: str) -> bool:
    """An answer overlaps a reference string when either contains the other as whole words."""
    return contains_norm(answer, reference) or contains_norm(reference, answer)


def is_abstention(answer: str) -> bool:
    return not normalize(answer) or bool(_ABSTAIN.search(normalize(answer).replace("_", " ")))


def compute_signals(answer: str, used_texts: dict[int, str], labels: Labels) -> Signals:
    """PAR / T_ASR / CONFUSION / UNK for one answer given the prompt-used chunk texts (by hit index)."""
    abstained = is_abstention(answer)
    correct = any(overlaps(answer, a) for a in labels.answers) if labels.answers else None
    t_asr = overlaps(answer, labels.target) if labels.target else None
    if labels.target:
        supporting = [i for i, t in used_texts.items() if contains_norm(t, labels.target)]
        par = bool(not abstained and t_asr and supporting)
        mode = "labelled"
    else:
        supporting = [i for i, t in used_texts.items() if contains_norm(t, answer)]
        par = bool(not abstained and supporting and not correct)
        mode = "label-free"
    confusion = None if correct is None else (not abstained and not par and not correct)
    return Signals(abstained, par, mode, t_asr, correct, confusion, supporting if par else [])


DEFAULT_TRIGGER = "PAR"  # the trigger predicate Pass-1 and the app use unless told otherwise
TRIGGERS: dict[str, Callable[[Signals], bool]] = {
    "PAR": lambda s: s.par,
    "T_ASR": lambda s: bool(s.t_asr),
    "CONFUSION": lambda s: bool(s.confusion),
    "ANY": lambda s: s.par or bool(s.t_asr) or bool(s.confusion),
    "ALWAYS": lambda s: True,
}


def fires(signals: Signals, trigger: str = DEFAULT_TRIGGER) -> bool:
    try:
        return TRIGGERS[trigger.upper()](signals)
    except KeyError:
        raise RagsecError(f"unknown trigger '{trigger}' (choose from {', '.join(TRIGGERS)})") from None


def triggered(trace: Trace, trigger: str = DEFAULT_TRIGGER) -> bool:
    """Evaluate a trigger on the signals logged in Pass-0 (no new model call)."""
    return fires(trace.signals, trigger)


# ---------------------------------------------------------------- schema validation

@lru_cache(maxsize=1)
def json_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def validate(record: dict[str, Any]) -> None:
    """Raise `RagsecError` naming the first schema violation; also checks the prompt-offset invariant."""
    import jsonschema

    try:
        jsonschema.validate(record, json_schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise RagsecError(f"trace does not match the schema at {where}: {exc.message}") from None
    for s in record["spans"]:
        if record["prompt"][s["start"] : s["end"]] != record["hits"][s["hit"]]["text"]:
            raise RagsecError(f"trace prompt offsets of {s['chunk_id']} do not reproduce the chunk text")


# ---------------------------------------------------------------- store

class TraceStore:
    """Append-only JSONL of traces; each append rewrites the file atomically (no torn records)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.skipped = 0  # unreadable lines seen by the last scan

    def append(self, trace: Trace) -> None:
        append_line_atomic(self.path, trace.to_json())

    def records(self) -> Iterator[dict[str, Any]]:
        self.skipped = 0
        if not self.path.exists():
            return
        # Split on "\n" only: records are written with ensure_ascii=False, so a raw U+2028 or U+0085
        # from corpus text sits inside a record, and str.splitlines() would tear it in two.
        for line in self.path.read_text(encoding="utf-8", errors="replace").split("\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if isinstance(record, dict):
                yield record
            else:  # torn or foreign line
                self.skipped += 1

    def get(self, trace_id: str) -> Trace:
        """Exact id or a unique prefix of one."""
        matches = [r for r in self.records() if str(r.get("trace_id", "")).startswith(trace_id)]
        exact = [r for r in matches if r.get("trace_id") == trace_id]
        if exact:
            return Trace.from_dict(exact[-1])
        if len(matches) == 1 and trace_id:
            return Trace.from_dict(matches[0])
        if not matches:
            raise RagsecError(f"no trace '{trace_id}' in {self.path}")
        raise RagsecError(f"trace id prefix '{trace_id}' is ambiguous ({len(matches)} traces)")
