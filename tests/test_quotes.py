"""Quotations read as units (`data/quotes.py`): a speaker's words with the sentence that frames them, a
bracketed aside, and the boundary's growth over a quotation a block reaches."""

from __future__ import annotations

from ragsec_core.data.quotes import quotations, whole_quotation

HOST = "Terms vary in length. "
SAID = 'In a 2019 interview, Dr. Okoye said: "In Canada a law set the term. It was limited to two years."'
AFTER = '"Diamond is the most stable. No mineral is more stable." said the historian Amara Lindqvist, who wrote on it.'


def test_a_quotation_runs_from_its_frame_to_its_close_and_takes_the_attribution_after_it():
    t = HOST + SAID + " Four ministers served twice."
    assert [t[a:b] for a, b in quotations(t)] == [SAID]
    t = HOST + AFTER + " On the other hand, quartz is less stable."
    assert [t[a:b] for a, b in quotations(t)] == [AFTER]  # "said the historian …": lowercase, the split cut it off


def test_a_quoted_title_or_a_mark_left_open_is_no_quotation():
    assert quotations('"I Wanna Be like You" is a song. It was sung by Louis Prima.') == []  # a title: a name
    assert quotations('He said "yes. Then he left. Nobody came back.') == []  # never closed
    record = '{"question": "Who designed it?", "answer": "Mara Eskell. She did."}'
    assert quotations(f"The host ends. {record} More host.") == []  # a JSON record's strings are its syntax
    glued = 'He wrote, "It was the best track on the album."Mara Eskell sang it. "It is popular today."'
    assert [glued[a:b] for a, b in quotations(glued)] == ['"It is popular today."']  # glued between words: unsure
    nested = 'She said: "In the movie "Smokey and the Bandit," Reynolds played Enos. It was a classic."'
    assert quotations(nested) == [(0, len(nested))]  # the title inside nests


def test_a_block_that_reaches_the_opening_or_closing_sentence_grows_over_the_quotation():
    t = HOST + SAID + " Four ministers served twice."
    start, end = t.index("In a 2019"), t.index(" Four")
    claim = (t.index("It was limited"), end)  # the last sentence, where the answer is
    assert whole_quotation(t, claim) == (start, end)
    t = HOST + AFTER + " On the other hand, quartz is less stable."
    assert whole_quotation(t, (t.index("No mineral"), t.index(" said"))) == (len(HOST), t.index(" On the"))


def test_a_block_between_the_sentences_of_a_hosts_quotation_stays_as_drawn():
    """A poison planted between two sentences of a host's own quotation reaches neither its opening nor its
    closing sentence: the quotation is the host's, and the block is not grown over it."""
    t = 'He recalled: "It was just me in the studio. Mara Eskell wrote it. Maybe we could use that."'
    inside = (t.index("Mara"), t.index(" Maybe"))
    assert whole_quotation(t, inside) == inside
    assert whole_quotation(HOST, (0, 5)) == (0, 5)


ASIDE = "(Editor's note: In the franchise, a total of 4 stations were built. Two others were shown unfinished.)"


def test_an_aside_of_sentences_in_brackets_is_a_quotation_and_a_bracket_inside_a_sentence_is_not():
    t = "Both stations appear in Legends (formerly the Universe).[citation needed] " + ASIDE + " They were big."
    assert [t[a:b] for a, b in quotations(t)] == [ASIDE]  # no lowercase attribution taken after an aside
    claim = (t.index("(Editor"), t.index(" Two others"))
    assert whole_quotation(t, claim) == (t.index("(Editor"), t.index(" They"))
    assert quotations("He was born (in 1950) in Rome. It rained (as ever). Fine.") == []  # phrases of a sentence
    assert quotations("The host ends. (Note: it was never closed. More host.") == []
    assert quotations("The host ends. (Note: a list (of two) follows) and more.") == []  # no sentence end before it
