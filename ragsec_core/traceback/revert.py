"""Pass-1's revert to a trusted snapshot (our extension of §4.3): the substitution counterfactual.

With the analyst's trusted copy of the corpus, a round first puts every change since it back to the
snapshot's text in one replay, instead of masking; the changes that the event needs are then kept, the
benign edits made since the snapshot dropped. A mixin of `ragcharacter.Pass1`, which owns the replays and
the session's state (as `search.Search` is); kept apart so that the revert reads on its own page.
"""

from __future__ import annotations

from dataclasses import replace

from ragsec_core._util.text import CLOSES_SENTENCE
from ragsec_core.data.spans import sentence_spans, trim
from ragsec_core.data.trace import contains_norm
from ragsec_core.traceback.boundary import REVERT_PATH, UNCHANGED_PATH
from ragsec_core.traceback.result import SpanRecord
from ragsec_core.traceback.session import Found, Session, grouped
from ragsec_core.traceback.snapshot import Snapshot

# What a change since the snapshot is: whole sentences the chunk gained (`added`: the revert deletes them),
# whole sentences it lost (`cut`: the revert puts them back), or words changed inside its sentences (`words`)
CHANGE_KINDS = ("added", "cut", "words")


def change_kind(chunk: str, change: SpanRecord) -> str:
    """Which of `CHANGE_KINDS` a reverted span of `chunk` is. Added or lost text counts as sentences only when
    it sits between the chunk's sentences and is whole sentences itself; words inserted or dropped inside a
    sentence are word changes (a typo-perturbed copy has such runs, of up to 60 words in GARAG's: all 590 of
    its NQ copies diff against their clean passages as word changes alone)."""
    if change.text and change.replacement:
        return "words"
    spans = sentence_spans(chunk, limit=len(chunk))
    starts, ends = {a for a, _ in spans} | {len(chunk)}, {b for _, b in spans} | {0}
    if change.text:
        s, e = trim(chunk, (change.local[0], change.local[1]))
        return "added" if s in starts and e in ends else "words"
    at = change.local[0]
    left, right = len(chunk[:at].rstrip()), len(chunk) - len(chunk[at:].lstrip())
    whole = CLOSES_SENTENCE.search((change.replacement or "").strip()) is not None
    return "cut" if whole and left in ends and right in starts else "words"


class Revert(Session):
    """The revert stages; `Pass1` provides the state and the replays declared in `Session`."""

    snapshot: Snapshot | None

    def _revert(self) -> Found | None:
        """With a trusted snapshot: one replay with every change since the snapshot in the live used chunks
        reverted to the snapshot's text (`snapshot`). If that undoes the event, the changes are the round's
        causal set and the chunks that hold them its verdict (after `_needed` keeps those the event needs);
        if not, one document's changes of one kind may still undo it alone (`_revert_alone`); failing that
        (or with nothing changed), the event does not come from the corpus's changes and the round ends
        `unchanged`, reporting nothing: the snapshot is the analyst's trusted ground, so masking inside it
        would only find text that was always there."""
        if self.snapshot is None:
            return None
        recs = [replace(self.record(i, h.local), replacement=h.trusted) for i in self._used_live()
                for h in self.snapshot.hunks(self.trace, i)
                if not any(a < h.local[1] and h.local[0] < b for a, b in self._local_masks(i))]
        if recs and not self.test("revert", recs).success:
            recs = self._revert_alone(recs)
        if not recs:
            return UNCHANGED_PATH, [], []
        needed = self._needed(recs)
        return REVERT_PATH, list(dict.fromkeys(r.hit for r in needed)), needed

    def _revert_alone(self, recs: list[SpanRecord]) -> list[SpanRecord]:
        """After a joint revert that left the event in place: the changes of one unit (`_alone_units`: one
        document's changes of one kind) that undo it alone, or none. A snapshot older than the incident
        predates legitimate updates too; reverting one that the right answer rests on (a fact corrected
        since) can keep the answer wrong although the poison is gone. The units are tried most changed first
        (`_changed_share`: a planted passage or a perturbed copy changes much, an update a sentence), at
        most `revert_alone` of them, one replay each."""
        units = self._alone_units(recs)
        for g in sorted(units, key=self._changed_share, reverse=True)[: self.b.revert_alone]:
            if self.test("revert_alone", g).success:
                return g
        return []

    def _alone_units(self, recs: list[SpanRecord]) -> list[list[SpanRecord]]:
        """What a failed joint revert tries alone: each changed document's changes of one kind
        (`_documents`, `CHANGE_KINDS`). An edit is made to one document and adds sentences, cuts sentences
        or changes words (a perturbed copy changes words; an update adds a sentence, cuts one or fixes a
        typo), so a document that both the attack and an ordinary edit changed since the snapshot often
        holds two kinds: a perturbed copy whose passage has since lost a sentence the snapshot still has.
        Fewer than two units: none (the joint revert already was the one)."""
        chunk = {r.hit: self.trace.hits[r.hit].text for r in recs}
        units = [g for doc in self._documents(recs) for k in CHANGE_KINDS
                 if (g := [r for r in doc if change_kind(chunk[r.hit], r) == k])]
        return units if len(units) > 1 else []

    def _changed_share(self, group: list[SpanRecord]) -> float:
        """The share of the used text of a unit's chunks that its changes since the snapshot cover (text lost
        counts its snapshot length)."""
        changed = sum(max(len(r.text), len(r.replacement or "")) for r in group)
        return changed / max(sum(len(self.trace.hits[i].text) for i in {r.hit for r in group}), 1)

    def _documents(self, recs: list[SpanRecord]) -> list[list[SpanRecord]]:
        """The changes grouped by the document they are in, in rank order: a document is edited as a whole
        (a perturbed copy replaces its passage, and may be split over two used chunks), so pruning keeps or
        drops its changes together. A hit without a document id is a document of its own."""
        def doc(r: SpanRecord) -> str:
            return self.trace.hits[r.hit].doc_id or f"chunk:{r.chunk_id}"

        return grouped(recs, doc)

    def _needed(self, recs: list[SpanRecord]) -> list[SpanRecord]:
        """The changes the event needs. A snapshot older than the incident also holds benign edits made
        since (a fixed typo, an added sentence); reverting them is harmless, but reporting them is not. The
        changes that wrote the event's answer into the corpus are the prime suspects. Added text that states
        it is a unit of its own (a planted passage, to its characters); a changed word that states it brings
        every change of its document along (the other typos of a perturbed copy are the same attack). One
        replay reverts only the suspects, and every other change goes when it holds, a benign edit inside a
        poisoned chunk too. Failing that, or with no suspect, the unit is the document (`_documents`): all
        changed documents stay when each wrote the answer (planted copies); when some did, one replay
        reverts only theirs; else each document's changes are dropped in turn, lowest-ranked first, while
        the event stays undone (`_prune`). One changed document and no answer-stating addition: no replay."""
        wrote = [r for r in recs if contains_norm(r.text, self._anchor)]
        groups = self._documents(recs)
        perturbed = [g for g in groups if any(r in wrote and r.replacement for r in g)]
        units = [r for r in recs if any(r in g for g in perturbed) or (r in wrote and r.replacement == "")]
        if units and len(units) < len(recs) and self.test("prune", units).success:
            return units
        suspects = [g for g in groups if any(r in wrote for r in g)]
        if len(groups) < 2 or len(suspects) == len(groups):
            return recs
        theirs = [r for g in suspects for r in g]
        if theirs and self.test("prune", theirs).success:
            return theirs
        return self._prune(groups)
