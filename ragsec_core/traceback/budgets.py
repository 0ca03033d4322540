"""Pass-1's budgets and switches (`ragcharacter.Pass1`): the paper's implementation defaults and our
extensions, each of which can be turned off to run the paper's search as published. Kept beside the
algorithm, not in it, so an artifact's `budgets` and the tests read one definition."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budgets:
    """The paper's implementation defaults."""

    max_chunks: int = 5
    max_sentences: int = 5
    kept_regions: int = 2
    max_span_candidates: int = 12
    max_bisect_steps: int = 6
    min_span_len: int = 4
    max_rounds: int = 3
    early_stop: bool = True  # stop chunk, sentence and phrase screening at the first successful mask
    # Our extension for several poisons (P = 5): when masking the first answer-holding chunk alone fails (or
    # the text marks two or more holders as planted copies), mask the answer in every holder in one replay,
    # keeping in the causal set the masks the event needs; then every holder the round would not report (after
    # a one-mask success, the others) is replayed alone, every other used chunk masked, and reported when it
    # carries the event by itself (`Pass1._alone`). False: the paper's fast path.
    multi_holder: bool = True
    # Our extensions, each False for the paper's search whatever the cost. Context check: before the
    # search, one replay masks every chunk that states the event string; if the event survives, the round
    # stops ("persists"). Block mask: when the fast path fails and the text marks holders as planted, one
    # replay masks their planted blocks (the boundary's textual rule); if the event goes, the round ends
    # ("block"); and when the context check leaves the event in place, one replay masks the blocks of the
    # holders the text leaves undecided (masking a holder whole also masks a host that says otherwise).
    # Stop unfound: a round whose search found no mask that removes the event (only the context check did)
    # ends the run, instead of masking its best guess and repeating the same futile search.
    context_check: bool = True
    block_mask: bool = True
    stop_unfound: bool = True
    # Round 0 reuses the Pass-0 answer and signals instead of a baseline call (§4.3); True replays the
    # unmasked prompt too, to check that it reproduces the logged answer and to anchor influence at
    # the drop from the unmasked log-probability.
    baseline_replay: bool = False
    # With a trusted snapshot (`Pass1._revert`): when reverting every change since the snapshot leaves the
    # event in place, up to this many units are reverted alone, the most changed first (one replay each):
    # one document's changes of one kind (`revert.CHANGE_KINDS`), since a legitimate update made since the
    # snapshot can be what the joint revert breaks. 0: the joint revert decides alone.
    revert_alone: int = 2
