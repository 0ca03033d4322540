"""The Pass-0 trace: one versioned record per query, the event signals, trigger predicates, and the store.

Every analysis (Pass-1 traceback, attention, baselines, reports, the app) reads this one schema.
The schema is also published as JSON Schema (`trace_schema.json`, documented in the README), and
`validate()` checks a record against it.

Version 2 adds what a trace of a deployed model needs: the chat `messages` as sent and which one of them
`prompt` is (`prompt_message`: Pass-1 masks that one and sends the others verbatim), the `origin` of an
imported trace, each hit's own retrieval `score`, and an unknown `alpha` (None). Version-1 records load
as version 2 with those fields' defaults, so every store written before keeps working.

Events are defined by *adoption of retrieved text*, not by ground-truth correctness (RAGCharacter §4.2):
an analyst often has no gold answer, and in multi-poison cases masking one poison need not restore it.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragsec_core._util.atomic import append_line_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import CITATION_MARKER, NUMBER_WORDS
from ragsec_core.data.tags import ROFF_MARK

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # v1 records are read as v2 with the new fields' defaults
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
    score: float | None = None  # the deployment's own retrieval score, as logged (imports); None for ragsec's
    # The chunk ends its document (only whitespace after source_end), as Pass-0 chunked it; None where not
    # known (imports, traces logged before it was recorded). Lets a snapshot see text cut from the end.
    ends_document: bool | None = None


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
    # The chat messages exactly as sent; `messages[prompt_message]["content"] == prompt`. None: `prompt` is
    # the whole text sent as is (the local model, a completions endpoint) and `messages` is empty.
    messages: list[dict[str, str]] = field(default_factory=list)
    prompt_message: int | None = None
    origin: dict[str, Any] = field(default_factory=dict)  # {} for a Pass-0 run; {"kind": "import", ...}
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        version = d.get("schema_version")
        if type(version) is not int or version not in READABLE_VERSIONS:  # not "1", not True
            raise RagsecError(
                f"trace {d.get('trace_id', '?')} has schema version {version}; this ragsec reads versions "
                f"{', '.join(map(str, READABLE_VERSIONS))}. Re-run the query with this version to get a current trace."
            )
        try:
            d = dict(d) | {"schema_version": SCHEMA_VERSION}  # an older record is read as the current version
            d["hits"] = [TraceHit(**h) for h in d["hits"]]
            d["spans"] = [PromptSpan(**s) for s in d["spans"]]
            d["signals"] = Signals(**d["signals"])
            d["labels"] = Labels(**d["labels"])
            return cls(**d)
        except (KeyError, TypeError, ValueError) as exc:  # hand-edited or foreign record
            raise RagsecError(f"trace {d.get('trace_id', '?')} is malformed ({type(exc).__name__}: {exc})") from None

    def search_alpha(self, default: float = 0.5) -> float:
        """The hybrid weight this trace was retrieved with, for methods that re-retrieve; an imported
        trace's deployment did not log one (None), so ragsec's default stands in."""
        alpha = self.retrieval.get("alpha")
        return default if alpha is None else float(alpha)

    def used_hits(self) -> list[TraceHit]:
        return [self.hits[i] for i in self.used]

    def in_prompt(self, local: Iterable[tuple[int, tuple[int, int]]]) -> list[tuple[int, int]]:
        """Chunk-local spans `(hit, (l, r))` in prompt coordinates (spans of chunks not in the prompt are left out):
        every score is taken there, where the chunks of one event sit side by side."""
        starts = {sp.hit: sp.start for sp in self.spans}
        return [(starts[i] + a, starts[i] + b) for i, (a, b) in local if i in starts]

    def messages_for(self, prompt: str) -> list[dict[str, str]]:
        """The chat messages to send for a (masked) `prompt`: the logged ones, with the prompt's message
        replaced, so a replay differs from the incident only where the mask is."""
        if self.prompt_message is None or not 0 <= self.prompt_message < len(self.messages):
            raise RagsecError(f"trace {self.trace_id} holds no chat messages: its prompt is sent as one text")
        out = [dict(m) for m in self.messages]
        out[self.prompt_message]["content"] = prompt
        return out


def new_trace_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------- text matching and event signals

_ABSTAIN = re.compile(r"\b(i don ?t know|do not know|cannot answer|can ?not be determined|no information|not (mentioned|provided|stated))\b")


_CITATION = re.compile(CITATION_MARKER)
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")


def normalize(text: str) -> str:
    """Case, accent-width, punctuation and article-insensitive form used by every matching rule; small
    numbers written as words read as digits ("two seasons" states the answer "2"); citation markers ("[2]")
    are dropped: they point to a note and state nothing; so are roff's font changes ("\\fBAdam Driver\\fR"
    states "Adam Driver", as `spans.find_ci` finds it)."""
    t = ROFF_MARK.sub(" ", unicodedata.normalize("NFKC", text)).lower()
    t = _CITATION.sub(" ", t)
    t = re.sub(r"[^\w\s]", " ", t)
    t = re.sub(r"\b(a|an|the)\b", " ", t)
    t = _NUMBER_WORD.sub(lambda m: NUMBER_WORDS[m.group(1)], t)
    return " ".join(t.split())


def contains_norm(haystack: str, needle: str) -> bool:
    """Whole-word containment after normalisation ('22' is not in '2424')."""
    n = normalize(needle)
    return bool(n) and f" {n} " in f" {normalize(haystack)} "


def overlaps(answer: str, reference: str) -> bool:
    """An answer overlaps a reference string when either contains the other as whole words."""
    return contains_norm(answer, reference) or contains_norm(reference, answer)


def event_anchor(answer: str, target: str | None) -> str:
    """The string an event is about: the adopted target when labels name it, else the answer."""
    return target if target and overlaps(answer, target) else answer


def is_abstention(answer: str) -> bool:
    return not normalize(answer) or bool(_ABSTAIN.search(normalize(answer).replace("_", " ")))


def states_correct(answer: str, labels: Labels) -> bool:
    """The answer states one of the labelled correct answers: an untargeted event (`LOST`) is undone when
    a replay brings one back (Pass-1's `restore` objective, the benchmark's judgement of such events)."""
    return any(overlaps(answer, a) for a in labels.answers)


def states_target(answer: str, labels: Labels) -> bool:
    """The answer states the labelled attacker target: a targeted event is undone when a replay drops it."""
    return bool(labels.target) and overlaps(answer, labels.target or "")


def compute_signals(answer: str, used_texts: dict[int, str], labels: Labels) -> Signals:
    """PAR / T_ASR / CONFUSION / UNK for one answer given the prompt-used chunk texts (by hit index)."""
    abstained = is_abstention(answer)
    correct = states_correct(answer, labels) if labels.answers else None
    t_asr = states_target(answer, labels) if labels.target else None
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
    "LOST": lambda s: s.correct is False,  # untargeted: the answer no longer states a labelled correct answer
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
    """Raise `RagsecError` naming the first schema violation; also checks the invariants a schema cannot
    state: the prompt offsets reproduce each chunk, and the prompt is the content of its message."""
    import jsonschema

    try:
        jsonschema.validate(record, json_schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise RagsecError(f"trace does not match the schema at {where}: {exc.message}") from None
    hits = record["hits"]
    for s in record["spans"]:
        if s["hit"] >= len(hits) or record["prompt"][s["start"] : s["end"]] != hits[s["hit"]]["text"]:
            raise RagsecError(f"trace prompt offsets of {s['chunk_id']} do not reproduce the chunk text")
    pm, messages = record.get("prompt_message"), record.get("messages", [])
    if pm is not None:
        if pm >= len(messages):
            raise RagsecError(f"trace prompt_message {pm} is not one of its {len(messages)} messages")
        if messages[pm]["content"] != record["prompt"]:
            raise RagsecError(f"trace prompt is not the content of message {pm}")


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
