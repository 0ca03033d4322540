"""What Pass-1 returns: every replayed test, the rounds, and the attribution and causal spans in both
chunk and prompt coordinates. Kept apart from the algorithm (`ragcharacter.py`) because artifacts, the
report, remediation, the baselines and the views read these records without running Pass-1."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, cast

from ragsec_core.data.spans import Span


@dataclass
class SpanRecord:
    hit: int
    chunk_id: str
    rank: int
    local: list[int]  # [l, r) in the chunk text
    prompt: list[int]  # [a, b) in the Pass-0 prompt; prompt[a:b] == chunk[l:r]
    text: str
    replacement: str | None = None  # reverted, not masked: the trusted snapshot's text in its place (`snapshot`)
    reason: str = ""  # a reported span: which evidence reported its chunk (`boundary.REASONS`); "" on a mask

    @property
    def prompt_span(self) -> Span:  # `tuple(prompt)`: two items, as `record` builds it and artifacts store it
        return cast(Span, tuple(self.prompt))


@dataclass
class Test:
    round: int
    stage: str  # revert | revert_alone | fast_path | fast_path_every | fast_path_multi | prune | sufficiency (older artifacts) | block | context | alone | chunk | sentence | phrase | bisect | final
    spans: list[SpanRecord]  # what this test masked (on top of earlier rounds' masks)
    answer: str
    influence: float  # drop in the influence signal (INFLUENCES); for logprob: drop in mean log-prob of the round's event answer (round 0 without a baseline: -mean log-prob)
    success: bool  # the trigger no longer fires
    ms: float
    cached: bool


@dataclass
class Round:
    index: int
    event_answer: str
    anchor: str
    path: str  # revert | unchanged | fast_path | fast_path_multi | block | search | fallback_chunk | persists (no mask in the context removes it) | unfound
    attribution: list[SpanRecord]  # the round's reported spans (`boundary.attribute_rounds`), one per chunk
    causal: list[SpanRecord]
    answer_after: str
    resolved: bool
    reproduced: bool | None  # replaying the round's unmasked prompt gave its event answer (None: not replayed)
    # The replays' verdict: the used hits this round's tests implicated, before the boundary adds textual
    # copies or drops benign holders. Kept apart so a stored result can be re-attributed (`--rescore`).
    # Empty in artifacts written before it existed: the round's attribution hits stand in.
    implicated: list[int] = field(default_factory=list)
    # Holders the text leaves undecided and the round would not report that state the event on their own:
    # replayed with every other used chunk masked whole, the answer still carries the event (`Pass1._alone`).
    # Empty in older artifacts.
    alone: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Reading:
    """One logged reading: the mean log-probability of `probe` in used chunk `hit`, read right after the
    chunk's text up to `end`, or, with a `premise` (the event string), right after the attack's premise
    instead (the question and that answer, `premise.premise_text`; `end` is then 0)."""

    hit: int
    end: int
    probe: tuple[int, int]
    logprob: float
    premise: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reading:
        return cls(int(d["hit"]), int(d["end"]), (int(d["probe"][0]), int(d["probe"][1])), float(d["logprob"]),
                   str(d.get("premise", "")))


@dataclass
class TracebackResult:
    trace_id: str
    trigger: str
    objective: str
    mask_mode: str
    triggered: bool
    rounds: list[Round] = field(default_factory=list)
    tests: list[Test] = field(default_factory=list)
    attribution: list[SpanRecord] = field(default_factory=list)
    causal: list[SpanRecord] = field(default_factory=list)
    mask_kind: str = "none"  # mask_span (one span) | mask_multi (several)
    original_answer: str = ""
    final_answer: str = ""
    resolved: bool = False
    model_calls: int = 0
    forward_pass_equivalents: float = 0.0
    ms: float = 0.0
    budgets: dict[str, Any] = field(default_factory=dict)
    influence: str = "logprob"  # INFLUENCES: which signal ranked the candidates (text-overlap on endpoints)
    backend: str = "local"  # where the replays ran (BACKENDS)
    usage: dict[str, float] = field(default_factory=dict)  # endpoint cost: requests, tokens, seconds, retries
    # the local LM's readings behind the attribution boundary (`cohesion`), so --rescore needs no model
    cohesion: list[Reading] = field(default_factory=list)
    reader: str = ""  # the model that took them ("" when none read: an endpoint run without a local reader)
    snapshot: str = ""  # the trusted snapshot the changes were reverted to (`Snapshot.label`); "" when none

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
