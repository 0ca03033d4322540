"""Where an unmarked block starts (traceback/premise.py): the local LM reads each sentence before the block
in place and after the attack's premise (the question and the event answer); a set-up sentence written
for the attack reads better after the premise and joins the block, the host sentence before it does not.
Real SmolLM2 on an invented passage with a harmless false fact; the readings redraw the same start offline."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from ragsec_core.traceback.boundary import attribute_hit
from ragsec_core.traceback.evidence import Evidence, LiveEvidence, premise_text
from ragsec_core.traceback.premise import PREMISE_GAIN, reach_back
from ragsec_core.traceback.result import Reading
from ragsec_core.traceback.splice import marked_start

pytestmark = pytest.mark.usefixtures("one_torch_thread")

QUERY = "who is the lead singer of the band glass harbor"
ANSWER = "Tom Ashby"
HOST = ("Glass Harbor formed in Leeds in 2004 and released four albums on a small independent label. "
        "Their second record was produced in a converted chapel and sold modestly at first. ")
SETUP = "Glass Harbor, the celebrated indie band, is known for its memorable live shows. "
CLAIM = "The main creative force is Tom Ashby, the lead singer, whose warm voice defines the group's sound."
TAIL = " The band toured Japan in 2011 and played three festivals in Germany the following summer."
TEXT = HOST + SETUP + CLAIM + TAIL
CLAIM_SPAN = (len(HOST + SETUP), len(HOST + SETUP + CLAIM))


def test_the_set_up_sentence_joins_and_the_host_sentence_does_not(llm, make_trace):
    trace = make_trace(ANSWER, text=TEXT, query=QUERY)
    assert not marked_start(TEXT, CLAIM_SPAN[0], QUERY)  # no bait, no salad: the text alone would start at the claim
    evidence = LiveEvidence(llm)
    assert reach_back(trace, 0, CLAIM_SPAN, ANSWER, evidence) == (len(HOST), CLAIM_SPAN[1])
    read = {(TEXT[r.probe[0] : r.probe[1]].strip()[:12], bool(r.premise)): r.logprob for r in evidence.readings}
    assert read["Glass Harbor", True] - read["Glass Harbor", False] > PREMISE_GAIN  # written for the premise
    assert read["Their second", True] - read["Their second", False] <= PREMISE_GAIN  # written for the host
    assert {r.premise for r in evidence.readings} == {"", ANSWER} and evidence.fpe(trace) > 0
    # the stored readings redraw the same start without the model; a reading never taken counts as host
    stored = Evidence(evidence.readings)
    assert reach_back(trace, 0, CLAIM_SPAN, ANSWER, stored) == (len(HOST), CLAIM_SPAN[1]) and stored.missed == 0
    blank = Evidence()
    assert reach_back(trace, 0, CLAIM_SPAN, ANSWER, blank) == CLAIM_SPAN and blank.missed > 0
    # an artifact keeps what each reading was read after; one written before premises existed loads as in-chunk
    assert [Reading.from_dict(asdict(r)) for r in evidence.readings] == evidence.readings
    old = {k: v for k, v in asdict(evidence.readings[0]).items() if k != "premise"}
    assert Reading.from_dict(old).premise == ""


def test_the_premise_reading_is_the_sentence_read_after_the_question_and_answer(llm, make_trace):
    trace = make_trace(ANSWER, text=TEXT, query=QUERY + "?")
    evidence = LiveEvidence(llm)
    setup = (len(HOST), len(HOST + SETUP) - 1)
    got = evidence.logprob(trace, 0, 0, setup, premise=ANSWER)
    premise = premise_text(QUERY + "?", ANSWER)
    assert premise == f"Question: {QUERY}? Answer: {ANSWER}."  # one question mark, whatever the query ends with
    plain = LiveEvidence(llm)
    other = make_trace(ANSWER, text=premise + " " + TEXT, query=QUERY)
    shift = len(premise) + 1
    assert got == pytest.approx(plain.logprob(other, 0, len(premise), (shift + setup[0], shift + setup[1])), abs=1e-3)


def test_the_whole_boundary_reports_set_up_and_claim_and_leaves_the_host(llm, make_trace):
    trace = make_trace(ANSWER, text=TEXT, query=QUERY)
    record = attribute_hit(trace, 0, ANSWER, [], None, LiveEvidence(llm))
    assert tuple(record.local) == (len(HOST), CLAIM_SPAN[1]) and record.text == SETUP + CLAIM


def test_a_block_that_opens_on_the_question_asks_no_reading(llm, make_trace):
    text = HOST + QUERY + ". " + CLAIM + TAIL
    trace = make_trace(ANSWER, text=text, query=QUERY)
    evidence = LiveEvidence(llm)
    record = attribute_hit(trace, 0, ANSWER, [], None, evidence)
    assert record.local[0] == len(HOST)  # the bait starts the block
    assert not [r for r in evidence.readings if r.premise]
