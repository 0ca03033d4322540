"""What Pass-1's stage mixins share of the session (`ragcharacter.Pass1`): state, replays, pruning.

The revert (`revert.Revert`) and the search (`search.Search`) each keep their stages on a page of their
own; `Pass1` holds the trace, the budgets, the cumulative masks and the replay engine, and implements the
methods declared here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragsec_core.data.spans import Span
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.budgets import Budgets
from ragsec_core.traceback.result import SpanRecord

Found = tuple[str, list[int], list[SpanRecord]]  # (path, the hits the replays implicated, the causal masks)


@dataclass(frozen=True)
class Outcome:
    """One replay's verdict: its answer, the influence drop, and whether the event is undone."""

    answer: str
    influence: float
    success: bool


class Session:
    """The state and replays a stage reads (`Pass1` provides them), and the pruning both paths share."""

    trace: Trace
    b: Budgets
    _anchor: str

    def test(self, stage: str, spans: list[SpanRecord]) -> Outcome:
        raise NotImplementedError

    def record(self, hit: int, local: Span) -> SpanRecord:
        raise NotImplementedError

    def _local_masks(self, hit: int, masks: Sequence[Span] | None = None) -> list[Span]:
        raise NotImplementedError

    def _used_live(self) -> list[int]:
        raise NotImplementedError

    def _prune(self, groups: list[list[SpanRecord]]) -> list[SpanRecord]:
        """The masks of the groups (one chunk's, in the masking path's causal set, or one document's changes,
        in the revert's: `grouped`) that the successful joint test needs: every group is dropped in turn,
        lowest-ranked first, while the event stays undone, one replay per group."""
        kept = list(groups)
        for g in sorted(groups, key=lambda g: -g[0].rank):
            trial = [x for x in kept if x is not g]
            if trial and self.test("prune", [r for x in trial for r in x]).success:
                kept = trial
        return [r for g in kept for r in g]


def grouped(recs: list[SpanRecord], key: Callable[[SpanRecord], object]) -> list[list[SpanRecord]]:
    """`recs` grouped by `key`, the groups in the order their first record comes: the units `_prune` keeps or
    drops whole."""
    return [[r for r in recs if key(r) == k] for k in dict.fromkeys(key(r) for r in recs)]
