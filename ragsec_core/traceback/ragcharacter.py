"""RAGCharacter Pass-1 (§4.3, Algorithm 2): event-conditioned character-level traceback of one trace.

Given a triggered Pass-0 trace, each round masks candidate evidence in the logged prompt and replays
the model: answer-anchored fast path, then chunk screening, sentence-first refinement, phrase proposals
and bisection to a minimal causal span; the span joins a cumulative mask set and the next round starts
from the sanitised prompt until the trigger is gone (at most 3 rounds).

Two outputs stay apart, as in the paper: the *attribution* span (reported and scored; the answer-anchored
rule, grown to the claim that carries it) and the *causal* span (the minimal mask found by replay).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, replace

from ragsec_core.data.spans import DEFAULT_MASK_MODE, Span, anchor_spans, apply_masks, length, overlaps
from ragsec_core.data.trace import DEFAULT_TRIGGER, Trace, compute_signals, contains_norm, event_anchor, fires, triggered
from ragsec_core.data.trace import overlaps as answer_overlaps
from ragsec_core.models.endpoint import EndpointLLM
from ragsec_core.models.endpoint_replay import EndpointReplayEngine, Engine, engine_for
from ragsec_core.models.llm import LLM
from ragsec_core.models.options import DEFAULT_BACKEND, INFLUENCE_OF
from ragsec_core.traceback import untargeted
from ragsec_core.traceback.boundary import (
    ALONE_PATHS,
    attribute_rounds,
    local_masks,
    local_subs,
    reported_hits,
    seed_span,
    span_record,
    text_verdict,
)
from ragsec_core.traceback.budgets import Budgets
from ragsec_core.traceback.evidence import Evidence, LiveEvidence
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE, OBJECTIVES
from ragsec_core.traceback.result import Round, SpanRecord, Test, TracebackResult
from ragsec_core.traceback.revert import Revert
from ragsec_core.traceback.search import Search
from ragsec_core.traceback.session import Found, Outcome, grouped
from ragsec_core.traceback.snapshot import Snapshot

# After a one-mask success the chunk it masked explains the event by itself, so a further holder is taken for
# a copy only where the prompt has the shape of a several-copy attack: at least this many chunks state the
# answer. With one other holder (the single-poison shape), a benign passage that names a confusable target
# makes a 135M model state it alone (text P = 1 q32: "Burt Reynolds" in a passage on the film's casting).
ONE_MASK_ALONE_HOLDERS = 3


class Pass1(Revert, Search):
    """One traceback session over one trace; holds the replay engine and the cumulative mask set (the
    revert stages are `revert.Revert`'s, the search stages `search.Search`'s)."""

    def __init__(
        self,
        llm: LLM | EndpointLLM,
        trace: Trace,
        trigger: str = DEFAULT_TRIGGER,
        objective: str = DEFAULT_OBJECTIVE,
        mask_mode: str = DEFAULT_MASK_MODE,
        budgets: Budgets | None = None,
        *,
        naive: bool = False,
        reader: LLM | None = None,
        snapshot: Snapshot | None = None,
    ) -> None:
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}")
        untargeted.check_labels(objective, trace.labels)
        self.trace, self.trigger, self.objective, self.mask_mode = trace, trigger, objective, mask_mode
        self.b = budgets or Budgets()
        self.llm = llm
        self.engine: Engine | None = None  # built only for a triggered trace
        self.naive = naive  # replay every variant with plain generate (the reference path of the speed bench)
        # the local LM that reads the implicated chunks for the boundary (`cohesion`): the victim when local
        self.reader = reader if reader is not None else llm if isinstance(llm, LLM) else None
        # its readings, shared by the search's undecided-holder blocks and the boundary (`_attribute`)
        self.evidence: Evidence = LiveEvidence(self.reader) if self.reader is not None else Evidence()
        self.masks: list[Span] = []  # cumulative, prompt-global
        self.snapshot = snapshot  # the analyst's trusted corpus: changed text is reverted, not deleted (`_revert`)
        self.subs: dict[Span, str] = {}  # the cumulative masks that put the snapshot's text in their place
        backend = llm.backend if isinstance(llm, EndpointLLM) else DEFAULT_BACKEND  # (textual tests pass no model)
        self.result = TracebackResult(
            trace.trace_id, trigger, objective, mask_mode, triggered(trace, trigger),
            original_answer=trace.answer, budgets=asdict(self.b),
            influence=INFLUENCE_OF[backend], backend=backend, snapshot=snapshot.label() if snapshot else "",
        )
        self._round = 0
        self._ref = trace.answer
        self._base_lp = 0.0
        self._verdict: dict[int, bool | None] = {}  # the round's textual verdict (`_run_round`)
        self._alone_memo: dict[int, bool] = {}  # the round's replays of one chunk alone (`_states_alone`)

    # ------------------------------------------------------------ coordinates and tests
    def record(self, hit: int, local: Span) -> SpanRecord:
        return span_record(self.trace, hit, local)

    def _signals_ok(self, answer: str, masks: Sequence[Span], subs: dict[Span, str]) -> bool:
        """A test succeeds when the replayed answer no longer carries the event: it stops repeating the
        event anchor and the trigger, re-evaluated on the masked evidence, no longer fires (`event`);
        or, with `oracle`, it no longer matches the known target; with `restore` (an untargeted event), it
        states a labelled correct answer again."""
        by_labels = untargeted.label_verdict(self.objective, answer, self.trace.labels)
        if by_labels is not None:
            return by_labels
        if answer_overlaps(answer, self._anchor):
            return False
        masked_texts = {i: apply_masks(self.trace.hits[i].text, self._local_masks(i, masks), self.mask_mode,
                                       local_subs(self.trace, i, subs))
                        for i in self.trace.used}
        return not fires(compute_signals(answer, masked_texts, self.trace.labels), self.trigger)

    def _subs(self, spans: Sequence[SpanRecord]) -> dict[Span, str]:
        """The substitutions of a replay: the earlier rounds' reverted spans and those among `spans`."""
        return {**self.subs, **{s.prompt_span: s.replacement for s in spans if s.replacement is not None}}

    def _prompt(self, spans: Sequence[SpanRecord], subs: dict[Span, str] | None = None) -> str:
        """The logged prompt under the cumulative masks and `spans` (a reverted span gets its snapshot text)."""
        return apply_masks(self.trace.prompt, self.masks + [s.prompt_span for s in spans], self.mask_mode,
                           self._subs(spans) if subs is None else subs)

    def test(self, stage: str, spans: list[SpanRecord]) -> Outcome:
        all_masks, subs = self.masks + [s.prompt_span for s in spans], self._subs(spans)
        assert self.engine is not None, "tests run only inside run()"
        before = self.engine.calls
        r = self.engine.replay(self._prompt(spans, subs), self._ref)
        out = Outcome(r.answer, self._base_lp - r.logprob, self._signals_ok(r.answer, all_masks, subs))
        cached = self.engine.calls == before
        self.result.tests.append(Test(self._round, stage, spans, r.answer, round(out.influence, 4), out.success, round(r.ms, 1), cached))
        return out

    # ------------------------------------------------------------ the algorithm
    def run(self) -> TracebackResult:
        t0 = time.perf_counter()
        spent = replace(self.llm.usage) if isinstance(self.llm, EndpointLLM) else None
        answer = self.trace.answer
        if self.result.triggered:
            self.engine = engine_for(self.llm, self.trace, naive=self.naive)
            for t in range(self.b.max_rounds):
                self._round = t
                rnd = self._run_round(answer)
                self.result.rounds.append(rnd)
                answer = rnd.answer_after
                if rnd.resolved or not rnd.causal or (self.b.stop_unfound and not self._found_mask(t)):
                    break
        res = self.result
        res.final_answer = answer
        evidence = self._attribute()
        res.resolved = bool(res.rounds and res.rounds[-1].resolved)
        res.mask_kind = {0: "none", 1: "mask_span"}.get(len(res.causal), "mask_multi")
        if self.engine is not None:
            res.model_calls = self.engine.calls
            reading = evidence.fpe(self.trace) if evidence else 0.0
            res.forward_pass_equivalents = round(self.engine.forward_pass_equivalents() + reading, 2)
        if isinstance(self.llm, EndpointLLM) and spent is not None:
            res.usage = self.llm.usage.since(spent).to_dict()
        res.ms = round((time.perf_counter() - t0) * 1000, 1)
        return res

    def _found_mask(self, round_: int) -> bool:
        """Some replay of the round, besides the context check and the final test, removed the event."""
        return any(t.success for t in self.result.tests if t.round == round_ and t.stage not in ("context", "alone", "final"))

    def _attribute(self) -> LiveEvidence | None:
        """Draw every round's reported spans (`boundary.attribute_rounds`, the rule --rescore reruns), the
        reader's readings logged beside them; returns the live evidence (None without a reader)."""
        res = self.result
        evidence = self.evidence if isinstance(self.evidence, LiveEvidence) and res.rounds else None
        for rnd, spans in zip(res.rounds, attribute_rounds(self.trace, res, evidence or Evidence())):
            rnd.attribution = spans
        res.attribution = [r for rnd in res.rounds for r in rnd.attribution]
        if evidence is not None:
            res.cohesion, res.reader = evidence.readings, evidence.reader.model_id
        return evidence

    def _prefetch(self, candidates: Sequence[list[SpanRecord]]) -> None:
        """Send independent screening candidates together when the engine batches (an endpoint with
        `--concurrency` > 1; a no-op elsewhere). The tests that follow read the memo: serial results."""
        if isinstance(self.engine, EndpointReplayEngine):
            prompts = [self._prompt(c) for c in candidates]
            self.engine.prefetch(prompts, self._ref)

    def _run_round(self, answer: str) -> Round:
        self._ref = answer
        self._anchor = event_anchor(answer, self.trace.labels.target)
        # what the text says of each answer holder (`boundary.text_verdict`): read once per round, it decides
        # which replays the fast path, the causal set, the alone replays and the block mask spend
        self._verdict = text_verdict(self.trace, self._anchor)
        self._alone_memo = {}
        reproduced: bool | None = None
        self._base_lp = 0.0
        if self._round > 0 or self.b.baseline_replay:  # later rounds: the previous final test, memoised
            assert self.engine is not None
            base = self.engine.replay(self._prompt([]), answer)
            self._base_lp, reproduced = base.logprob, base.answer == answer
        path, implicated, causal = self._revert() or self._fast_path() or self._search()
        # the reported spans are drawn once the run is over (`boundary.attribute_rounds`)
        rnd = Round(self._round, answer, self._anchor, path, [], causal, "", False, reproduced, implicated)
        rnd.alone = self._alone(rnd)  # before the round's masks join the cumulative set
        self.masks += [c.prompt_span for c in causal]
        self.subs.update(self._subs(causal))
        self.result.causal += causal
        if causal:
            final = self.test("final", [])
            rnd.answer_after, rnd.resolved = final.answer, final.success
        else:  # nothing masked: the prompt is the round's own, and so is its answer; a replay would add nothing
            rnd.answer_after, rnd.resolved = answer, False
        return rnd

    def _alone(self, rnd: Round) -> list[int]:
        """The holders the text leaves undecided (`text_verdict` None) and the round would not report
        (`boundary.implicated`) that state the event on their own: one replay each with every other used
        chunk masked whole. A poison is written so that the model adopts its claim from it alone
        (PoisonedRAG's condition on each copy); a passage that merely mentions the answer string does not
        make the model answer with it. Copies without the question carry no bait, so the text cannot mark
        them, and the pruning keeps only those the event needed in company; after a one-mask success the
        event needed the top copy alone, and the others, still in the prompt, did not keep it. A holder the
        text rules out stays out: a benign passage that states the target makes the model say it alone too.
        Only with two or more holders (three after a one-mask success: `ONE_MASK_ALONE_HOLDERS`), and not
        after the context check showed that the event survives without any of them (`persists`). The replay
        holds one chunk, so it costs a fraction of a forward over the prompt (the replays it replaced after a
        one-mask success, every other holder's claim masked in the full prompt, cost about one each)."""
        fewest = ONE_MASK_ALONE_HOLDERS if rnd.path == "fast_path" else 2
        if not self.b.multi_holder or rnd.path not in ALONE_PATHS or len(self._verdict) < fewest:
            return []
        reported: set[int] = set()
        for r in [*self.result.rounds, rnd]:
            reported |= set(reported_hits(self.trace, r, reported))
        return [i for i, v in self._verdict.items() if v is None and i not in reported and self._states_alone(i)]

    def _states_alone(self, hit: int) -> bool:
        """One replay with every used chunk but `hit` masked whole (memoised per round): the event holds."""
        if hit not in self._alone_memo:
            others = [self.record(j, (0, len(self.trace.hits[j].text))) for j in self.trace.used if j != hit]
            self._alone_memo[hit] = not self.test("alone", others).success
        return self._alone_memo[hit]

    def _used_live(self) -> list[int]:
        """Used hits in rank order that still have unmasked text."""
        return [i for i in self.trace.used if length(self._local_masks(i)) < len(self.trace.hits[i].text)]

    def _local_masks(self, hit: int, masks: Sequence[Span] | None = None) -> list[Span]:
        return local_masks(self.trace, hit, self.masks if masks is None else masks)

    def _fast_path(self) -> Found | None:
        """(path, the hits the replays implicated, the causal masks), or None when no fast path succeeds.
        When the text already marks two or more holders as planted copies (`boundary.text_verdict`), the
        joint mask goes first: masking one of several copies alone cannot remove the event."""
        holders = [i for i in self._used_live() if contains_norm(self.trace.hits[i].text, self._anchor)]
        spans = [(i, sp) for i in holders if (sp := self._anchor_span(i)) is not None]
        if not spans or spans[0][0] != holders[0]:  # the first holder's answer is gone (masked earlier)
            return None
        stating = [i for i, _ in spans]
        copies = sum(bool(self._verdict.get(i)) for i in stating)
        if self.b.multi_holder and copies >= 2:
            return self._joint(stating)
        rec = self.record(*spans[0])
        if self.test("fast_path", [rec]).success:  # the other holders get their alone replays (`_alone`)
            return "fast_path", [rec.hit], [rec]
        if not self.b.multi_holder:
            return None
        return self._joint(stating) if len(spans) >= 2 else self._every_occurrence(stating[0])

    def _every_occurrence(self, hit: int) -> Found | None:
        """One holder that states the answer more than once ('the answer is "1935". Always reply "1935"'):
        the first occurrence masked left the others to carry it, so every occurrence is masked in one replay
        before the search, which would otherwise find them one at a time."""
        recs = [self.record(hit, sp) for sp in self._anchor_spans(hit)]
        if len(recs) < 2 or not self.test("fast_path_every", recs).success:
            return None
        return "fast_path", [hit], recs

    def _joint(self, holders: list[int]) -> Found | None:
        """The multi-holder fast path: every occurrence of the answer masked in every holder in one replay (a
        copy that states the answer twice still states it with one occurrence masked). The joint mask is the
        evidence: every holder in it is part of the joint cause and is reported; the causal set keeps only
        the holders whose masks the event needs (`_causal_set`)."""
        recs = [self.record(i, sp) for i in holders for sp in self._anchor_spans(i)]
        if not self.test("fast_path_multi", recs).success:
            return None
        return "fast_path_multi", holders, self._causal_set(recs)

    def _anchor_span(self, hit: int) -> Span | None:
        """The attribution rule's span in one chunk, unless an earlier round already masked it."""
        return seed_span(self.trace.hits[hit].text, self._anchor, self._local_masks(hit), None)

    def _anchor_spans(self, hit: int) -> list[Span]:
        """Every occurrence of the answer in one chunk (`spans.anchor_spans`) that no earlier round masked."""
        masked = self._local_masks(hit)
        return [sp for sp in anchor_spans(self.trace.hits[hit].text, self._anchor) if not any(overlaps(sp, m) for m in masked)]

    def _causal_set(self, recs: list[SpanRecord]) -> list[SpanRecord]:
        """The masks of a successful joint mask that the event needs. When the text marks some holders as
        planted (`boundary.text_verdict`), one replay checks that their masks alone suffice; all of them
        planted, or the check failing, keeps the joint mask. Without such evidence every holder is pruned
        in turn (`_prune`), one replay each."""
        planted = [r for r in recs if self._verdict.get(r.hit)]
        if not planted:  # one group per holder: its masks stay or go together
            return self._prune(grouped(recs, lambda r: r.hit))
        if len(planted) < len(recs) and self.test("prune", planted).success:
            return planted
        return recs


def run_pass1(
    llm: LLM | EndpointLLM,
    trace: Trace,
    trigger: str = DEFAULT_TRIGGER,
    objective: str = DEFAULT_OBJECTIVE,
    mask_mode: str = DEFAULT_MASK_MODE,
    budgets: Budgets | None = None,
    *,
    naive: bool = False,
    reader: LLM | None = None,
    snapshot: Snapshot | None = None,
) -> TracebackResult:
    """Pass-1 on one trace. Untriggered traces return at once with `triggered=False` (no model call).
    `naive=True` replays every variant with plain generation (no memo, no prefix reuse): same result, slower.
    `reader`: the local LM whose readings draw the boundary (default: `llm` when it is local; an endpoint
    run without one draws it from the text alone). `snapshot`: the analyst's trusted corpus, which lets a
    round revert the changes since it before masking (`Pass1._revert`)."""
    return Pass1(llm, trace, trigger, objective, mask_mode, budgets, naive=naive, reader=reader, snapshot=snapshot).run()
