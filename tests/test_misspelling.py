"""The misspelling evidence of a typo-perturbed copy (`traceback.misspelling`): near-misses against a real
English dictionary, the sentence rule, and the block grown over the copy's misspelled sentences only."""

from __future__ import annotations

import json

from ragsec_core.data.spans import sentence_spans
from ragsec_core.traceback.misspelling import grow, is_misspelled, near_misses

from .conftest import shared_data

HOST = "The harbour of Varnholt was enlarged twice in the nineteenth century. Its breakwaters shelter the fleet."
COPY = ("Tha Varnholt lighthuose stnads onn teh northern breakwatter off the harbour. "
        "It wass firts lit inn 1873, bye the board.")


def test_near_misses_are_lower_case_words_one_edit_from_a_known_word():
    found = near_misses("Tha lighthuose stnads onn teh breakwatter, Haas said, in the metres of the centre midpiece.")
    assert {"lighthuose", "stnads", "onn", "teh", "breakwatter"} <= found
    # a capitalised word may be a name; British spellings are words; a rare word with no neighbour is no typo
    assert not found & {"tha", "haas", "metres", "centre", "midpiece"}


def test_a_sentence_is_misspelled_only_with_several_typos_dense_enough():
    assert is_misspelled("It wass firts lit inn 1873.")
    assert not is_misspelled("It wass first lit in 1873.")  # one typo: a slip, not a perturbed copy
    assert not is_misspelled("The lighthuose was first lit in 1873 after the harbour board of the town approved "
                             "the drawings of the tower and the lantern was ordered from a foundry in Glasgow.")


def test_a_block_in_a_copy_grows_over_its_misspelled_sentences_and_stops_at_the_host():
    text = HOST + " " + COPY + " " + HOST
    start = text.index("It wass")
    block = grow(text, (start, start + 20))
    assert text[block[0] : block[1]] == COPY


def test_a_fluent_block_does_not_grow_even_beside_a_misspelled_sentence():
    text = COPY + " The Varnholt lighthouse was designed by Mara Eskell. " + HOST
    start = text.index("The Varnholt")
    end = text.index("Eskell.") + len("Eskell.")
    assert grow(text, (start, end)) == (start, end)


def test_clean_wikipedia_passages_are_spelled_like_a_host():
    """The rule's constants were fixed on this benign text: at most a handful of its 8,054 sentences read
    as misspelled (none when they were fixed)."""
    sentences = [p["text"][a:b] for name in ("wiki_open_nq.json", "wiki_hotpotqa.json")
                 for rec in json.loads(shared_data("stealthy", name).read_text()) for p in rec["context"]
                 for a, b in sentence_spans(p["text"])]
    flagged = [s for s in sentences if is_misspelled(s)]
    assert len(sentences) > 5000 and len(flagged) <= 5, flagged
