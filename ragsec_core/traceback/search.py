"""Pass-1's search (§4.3, Algorithm 2), for the rounds the answer-anchored fast path does not resolve.

The block mask and the context check first (our extensions, `Budgets`; when the context check leaves the
event in place, the blocks of the holders the text leaves undecided), then the paper's screening:
chunks, then sentences inside the best chunk, then phrase proposals, and bisection of the best mask down
to a minimal causal span. Under the `restore` objective the text that states the correct answer stays
(`untargeted`). A mixin of `ragcharacter.Pass1`, which owns the replays and the session's state; kept
apart so that each stage of Pass-1 reads on its own page.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragsec_core.data.spans import Span, bisect_minimal, candidate_spans, rank_sentences
from ragsec_core.data.trace import contains_norm
from ragsec_core.traceback import untargeted
from ragsec_core.traceback.boundary import attribute_hit
from ragsec_core.traceback.evidence import Evidence
from ragsec_core.traceback.result import SpanRecord
from ragsec_core.traceback.session import Found, Outcome, Session, grouped

# Answers to a yes/no question: as an event anchor they occur in any prose as words ("from no other genera"),
# so the text draws no claim around them
POLAR_ANSWERS = frozenset({"yes", "no"})


class Search(Session):
    """The search stages; `Pass1` provides the state and the replays declared here and in `Session`."""

    objective: str
    masks: list[Span]
    evidence: Evidence
    _verdict: dict[int, bool | None]

    def _prefetch(self, candidates: Sequence[list[SpanRecord]]) -> None:
        raise NotImplementedError

    def _anchor_span(self, hit: int) -> Span | None:
        raise NotImplementedError

    def _search(self) -> Found:
        """The paper's screening, after the block mask and the context check: chunks, sentences inside the
        best one, phrases, then bisection of the best mask to a minimal span (`_bisect`)."""
        live = self._used_live()
        holders = [i for i in live if contains_norm(self.trace.hits[i].text, self._anchor)]
        block = self._block(holders) if self.b.block_mask else None
        if block is not None:
            return "block", [r.hit for r in block], block
        if self.b.context_check and not self._context_clears(live, holders):
            # what the text marks as planted is still reported (`boundary.implicated`)
            return self._undecided_blocks(holders) or ("persists", [], [])
        scored = []
        witnessed = untargeted.witnesses(self.trace, live) if self.objective == "restore" else []  # never masked whole
        chunks = [i for i in holders or live if i not in witnessed][: self.b.max_chunks]
        self._prefetch([[self.record(i, (0, len(self.trace.hits[i].text)))] for i in chunks])
        for i in chunks:
            text = self.trace.hits[i].text
            out = self.test("chunk", [self.record(i, (0, len(text)))])
            scored.append((out.success, out.influence, -self.trace.hits[i].rank, i))
            if out.success and self.b.early_stop:
                break
        if not scored and not witnessed:
            i = live[0] if live else self.trace.used[0]
            return "fallback_chunk", [i], [self.record(i, (0, len(self.trace.hits[i].text)))]
        hit = max(scored)[3] if scored and (max(scored)[0] or not witnessed) else witnessed[0]
        text = self.trace.hits[hit].text
        masked = self._local_masks(hit)
        sent_scores = []
        ranked = rank_sentences(text, self._anchor, masked)
        sentences = (untargeted.answer_free(self.trace, hit, ranked) if witnessed else ranked)[: self.b.max_sentences]
        self._prefetch([[self.record(hit, s)] for s in sentences])
        for s in sentences:
            out = self.test("sentence", [self.record(hit, s)])
            sent_scores.append((out.success, out.influence, -s[0], s))
            if out.success and self.b.early_stop:
                break
        sent_scores.sort(reverse=True)
        regions = [s for *_, s in sent_scores[: self.b.kept_regions]]
        if self.objective == "restore" and not (sent_scores and sent_scores[0][0]):
            return "unfound", [], []  # the phrases are cut around the wrong answer: no replay would stand behind a span
        if sent_scores and sent_scores[0][0]:
            seed, seed_out = sent_scores[0][3], Outcome("", sent_scores[0][1], True)
        else:
            props = candidate_spans(text, self._anchor, regions, masked, self.b.max_span_candidates)
            best = None
            for p in props:
                out = self.test("phrase", [self.record(hit, p)])
                if best is None or (out.success, out.influence) > (best[1].success, best[1].influence):
                    best = (p, out)
                if out.success and self.b.early_stop:
                    break
            if best is None:
                return "fallback_chunk", [hit], [self.record(hit, (0, len(text)))]
            seed, seed_out = best
        return "search", [hit], [self.record(hit, self._bisect(hit, seed, seed_out))]

    def _block(self, holders: list[int]) -> list[SpanRecord] | None:
        """One replay with the planted block of every holder the text marks as a planted claim masked
        (`_masked_blocks`): the answer string masked alone was not enough (a poison restates its claim in
        other words), and the block is the hypothesis the boundary reports anyway. Its masks are the round's
        causal set when the event goes; None otherwise (the search runs)."""
        return self._masked_blocks([i for i in holders if self._verdict.get(i)], Evidence())

    def _undecided_blocks(self, holders: list[int]) -> Found | None:
        """After a context check that the event survived (targeted objectives, with the block mask on): one
        replay with the planted block that the text draws in each holder it leaves undecided
        (`boundary.text_verdict` None) masked, then the blocks the event needs (`_prune`). The context check
        masks each holder whole, host included, and a host can hold what the model would answer without the
        poison ("No additional seasons …" beside a false count): masking it all left the model its prior
        answer, while the poison removed alone gives the host's. Holders the text marks were the block mask's
        already, and those it rules out stay unmasked (a benign mention of the answer). Not for a yes/no
        anchor (`POLAR_ANSWERS`): the text draws no claim around it. These blocks are drawn with the local LM's
        readings (`self.evidence`, the ones the boundary reports with): nothing in such a holder marks the
        claim, so the text alone draws the claim sentence only, and a trailing sentence that restates it
        ("No additional seasons have been produced …" after "… two seasons.") kept the event alive."""
        if not self.b.block_mask or self.objective == "restore" or self._anchor.strip().lower() in POLAR_ANSWERS:
            return None
        blocks = self._masked_blocks([i for i in holders if self._verdict.get(i) is None], self.evidence)
        if blocks is None:
            return None
        kept = self._prune(grouped(blocks, lambda r: r.hit))  # one block alone: no replay, kept as it is
        return "block", [r.hit for r in kept], kept

    def _masked_blocks(self, hits: list[int], evidence: Evidence) -> list[SpanRecord] | None:
        """The planted block the boundary draws in each of `hits` that still states the answer
        (`boundary.attribute_hit`, with `evidence`'s readings; an empty `Evidence` draws from the text
        alone), masked together in one replay: the blocks when the event goes, else None (no replay without
        a block)."""
        blocks = [attribute_hit(self.trace, i, self._anchor, self.masks, None, evidence)
                  for i in hits if self._anchor_span(i) is not None]
        return blocks if blocks and self.test("block", blocks).success else None

    def _context_clears(self, live: list[int], holders: list[int]) -> bool:
        """One replay with all the text that could carry the event masked (each chunk stating the event string,
        whole; restoring, each sentence stating no correct answer: `untargeted.context_masks`). If that does
        not undo the event, no mask inside it does (the model answers from the question or its own knowledge:
        HotpotQA's "A or B?"), and the search would spend its whole budget for nothing."""
        if self.objective != "restore" and not holders:
            return True
        masks = (untargeted.context_masks(self.trace, live, {i: self._local_masks(i) for i in live})
                 if self.objective == "restore" else [(i, (0, len(self.trace.hits[i].text))) for i in holders])
        return self.test("context", [self.record(i, sp) for i, sp in masks]).success

    def _bisect(self, hit: int, seed: Span, seed_out: Outcome) -> Span:
        text = self.trace.hits[hit].text

        def better(half: Span) -> bool:
            out = self.test("bisect", [self.record(hit, half)])
            return out.success if seed_out.success else out.influence >= seed_out.influence

        span, _ = bisect_minimal(text, seed, better, self.b.max_bisect_steps, self.b.min_span_len)
        return span
