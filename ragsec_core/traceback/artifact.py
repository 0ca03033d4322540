"""The Pass-1 artifact (a Pass-0 trace plus its traceback) on disk, and its step-by-step view.

One JSON file holds both halves, so a report, the app's stepper or a colleague can audit a traceback
without the store it came from. The stepper view replays the record, not the model: each step is one
logged test with the full mask set it was run under (earlier rounds' causal masks plus its own).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core.data.corpus import read_json
from ragsec_core.data.spans import Span, apply_masks, find_ci, merge
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.result import Reading, Round, SpanRecord, Test, TracebackResult

ARTIFACT_FORMAT = 1


@dataclass(frozen=True)
class Artifact:
    trace: Trace
    pass1: TracebackResult

    def to_dict(self) -> dict[str, Any]:
        return {"format": ARTIFACT_FORMAT, "trace": self.trace.to_dict(), "pass1": self.pass1.to_dict()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


def save_artifact(path: str | Path, artifact: Artifact) -> Path:
    write_text_atomic(path, artifact.to_json() + "\n")
    return Path(path)


def load_artifact(path: str | Path) -> Artifact:
    return artifact_from_dict(read_json(path, "Pass-1 artifact"))


def artifact_from_dict(d: Any) -> Artifact:
    if not isinstance(d, dict) or "trace" not in d or "pass1" not in d:
        raise RagsecError("not a ragsec Pass-1 artifact (expected keys 'trace' and 'pass1'): make one with `ragsec trace ID`")
    if d.get("format", ARTIFACT_FORMAT) != ARTIFACT_FORMAT:
        raise RagsecError(f"artifact format {d.get('format')} is not {ARTIFACT_FORMAT}: re-run `ragsec trace` on it")
    try:
        return Artifact(Trace.from_dict(d["trace"]), result_from_dict(d["pass1"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise RagsecError(f"damaged Pass-1 artifact: {exc}") from None


def _spans(d: list[dict[str, Any]] | dict[str, Any] | None) -> list[SpanRecord]:
    """A round's spans; artifacts written before multi-holder rounds stored one span or null."""
    if d is None:
        return []
    return [SpanRecord(**s) for s in (d if isinstance(d, list) else [d])]


def result_from_dict(d: dict[str, Any]) -> TracebackResult:
    d = dict(d)
    d["rounds"] = [
        Round(**{**r, "attribution": _spans(r.get("attribution")), "causal": _spans(r.get("causal"))})
        for r in d.get("rounds", [])
    ]
    d["tests"] = [Test(**{**t, "spans": [SpanRecord(**s) for s in t.get("spans", [])]}) for t in d.get("tests", [])]
    d["attribution"] = [SpanRecord(**s) for s in d.get("attribution", [])]
    d["causal"] = [SpanRecord(**s) for s in d.get("causal", [])]
    d["cohesion"] = [Reading.from_dict(r) for r in d.get("cohesion", [])]
    return TracebackResult(**d)


# ---------------------------------------------------------------- stepper view

@dataclass(frozen=True)
class Step:
    index: int
    test: Test
    earlier: tuple[Span, ...]  # causal masks of earlier rounds (prompt-global)

    @property
    def masks(self) -> list[Span]:
        """Every prompt range masked in this replay, merged."""
        return merge(list(self.earlier) + [s.prompt_span for s in self.test.spans])


def steps(result: TracebackResult) -> list[Step]:
    """Every logged test in order, each with the cumulative mask set it ran under."""
    earlier: dict[int, list[Span]] = {}
    acc: list[Span] = []
    for r in result.rounds:
        earlier[r.index] = list(acc)
        acc += [(c.prompt[0], c.prompt[1]) for c in r.causal]
    return [Step(i, t, tuple(earlier.get(t.round, acc))) for i, t in enumerate(result.tests)]


def masked_prompt(trace: Trace, step: Step, mode: str = "delete") -> str:
    """The prompt the model actually saw in this step."""
    return apply_masks(trace.prompt, step.masks, mode)


def prompt_window(trace: Trace, step: Step, margin: int = 300) -> tuple[int, int]:
    """The part of the prompt worth showing for a step: the masked ranges plus some context."""
    if not step.masks:
        return 0, len(trace.prompt)
    a = min(m[0] for m in step.masks)
    b = max(m[1] for m in step.masks)
    return max(0, a - margin), min(len(trace.prompt), b + margin)


def cost_line(result: TracebackResult) -> str:
    """The cost in one line, as the CLI, the report and the app state it (with the endpoint's usage)."""
    line = f"{result.model_calls} model calls, {result.forward_pass_equivalents} forward-pass equivalents, {result.ms / 1000:.1f} s"
    u = result.usage
    if u:
        line += (f"; endpoint: {u.get('requests', 0)} requests, {u.get('prompt_tokens', 0)} prompt + "
                 f"{u.get('completion_tokens', 0)} completion tokens, {u.get('seconds', 0)} s, {u.get('retries', 0)} retries")
    return line


def boundary_line(result: TracebackResult) -> str:
    """What drew the reported spans: the textual rule alone, or with the local LM's readings."""
    if not result.reader:
        return "textual rule (no local model read the chunks)"
    return f"textual rule + {len(result.cohesion)} readings by {result.reader}"


# Shown beside the names `named_in_question` returns (views add them as untrusted text).
QUESTION_CAVEAT = ("The event string is named in the question itself (e.g. one of two names a comparison question "
                   "asks between). Every passage about it names it too, so a reported span that is only a passage's "
                   "mention of it shows where the name is, not that a planted claim made the model choose it; an "
                   "attack that argues for it without naming it leaves no text for the event to anchor on.")


def named_in_question(trace: Trace, result: TracebackResult) -> list[str]:
    """The rounds' event strings that the question names (as whole words), once each. Pass-1 anchors on the
    event string: when the question names it, masking its mentions removes the passages' subject, and the
    answer changes whether or not a planted text caused it (a misleading article about the other name can
    make the model pick this one without ever stating it; seen on RAGDefender's HotpotQA files, README)."""
    return list(dict.fromkeys(r.anchor for r in result.rounds if r.anchor and find_ci(trace.query, r.anchor)))


def caveat_line(trace: Trace, result: TracebackResult) -> str:
    """The caveat with the names it is about, as the CLI and the report state it; "" when the question names
    no event string. Names are quoted with `repr`, so control characters in them come out escaped."""
    named = named_in_question(trace, result)
    return f"{QUESTION_CAVEAT} Named: {', '.join(map(repr, named))}" if named else ""


def access_line(result: TracebackResult) -> str:
    """How the replays reached the model: white-box in process, or black-box over an endpoint."""
    if result.backend == "endpoint":
        return f"endpoint (black-box; influence: {result.influence})"
    return f"local model (white-box; influence: {result.influence})"


def cost_summary(result: TracebackResult) -> dict[str, Any]:
    tests = result.tests
    return {
        "tests": len(tests),
        "model_calls": result.model_calls,
        "cached_tests": sum(t.cached for t in tests),
        "forward_pass_equivalents": result.forward_pass_equivalents,
        "replay_ms": round(sum(t.ms for t in tests), 1),
        "total_ms": result.ms,
        "backend": result.backend,
        "influence": result.influence,
        **({"endpoint": result.usage} if result.usage else {}),
    }
