"""Copies of one claim (`traceback.copies`), with the real MiniLM: a further copy that says what the reported
copies say joins the report; a benign passage that names the same answer does not."""

from ragsec_core.traceback.boundary import alike, attribute_rounds, text_verdict
from ragsec_core.traceback.copies import alike_copies, claim_sentence
from ragsec_core.traceback.result import Round, TracebackResult
from tests.test_boundary import UNMARKED, _round, _trace

# three copies of one claim in other words (the first two were reported), then a benign mention of the target
COPIES = [
    "Orsin the navigator sailed from Pella to the island of Quillon.",
    "Legends of the sea tell of a long voyage. After leaving Pella, the navigator Orsin made his way to Quillon.",
    "Sailors still sing of the old captain. Orsin, the famed navigator, journeyed on to Quillon once he had left Pella.",
    "Pella's harbour was rebuilt in stone after the fire. Traders from Quillon sold salt there in the spring.",
]


def _joint(path: str, causal: tuple[int, ...]) -> Round:
    """A round of `path` whose replays implicated the holders in `causal` (`test_boundary._round`)."""
    return _round(path, [], causal, _trace(UNMARKED, COPIES))


def test_the_claim_sentence_is_the_first_that_states_the_anchor() -> None:
    assert claim_sentence(COPIES[1], "Quillon") == "After leaving Pella, the navigator Orsin made his way to Quillon."
    assert claim_sentence("No answer here. Nor here.", "Quillon") is None


def test_a_further_copy_joins_two_reported_copies_and_a_benign_mention_does_not() -> None:
    trace = _trace(UNMARKED, COPIES)
    assert set(text_verdict(trace, "Quillon").values()) == {None}  # the text decides none of the four
    assert alike_copies(trace, "Quillon", [0, 1], set()) == [2]
    assert alike_copies(trace, "Quillon", [0, 1], {2}) == []  # reported by an earlier round
    # one reported holder gives no bar: a single planted text adds nothing
    assert alike_copies(trace, "Quillon", [0], set()) == []
    # through the boundary: a joint mask that needed the first two copies reports the third as well
    result = TracebackResult("t", "PAR", "event", "delete", True, rounds=[_joint("fast_path_multi", (0, 1))])
    assert [(r.hit, r.reason) for r in attribute_rounds(trace, result)[0]] == [(0, "replays"), (1, "replays"), (2, "alike")]


def test_rounds_that_report_whole_chunks_or_a_revert_add_no_alike_copy() -> None:
    trace = _trace(UNMARKED, COPIES)
    for path in ("fallback_chunk", "revert", "unchanged"):
        assert alike(trace, _joint(path, (0, 1)), [0, 1], set()) == []
    assert alike(trace, _joint("search", (0, 1)), [0, 1], set()) == [2]
