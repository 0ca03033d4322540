"""The held-out forms of `bench/held_out_notations.py` read back as their own tools read them: the `conllu`
parser reads the CoNLL-U (each sentence's `# text =` line, and the same text again from its token rows and
`SpaceAfter=No`), `pydifact` reads the EDIFACT interchange (its `FTX` pieces, its releases undone, and the
segment count its trailer states), and `pypugjs` renders the Pug template as HTML. Each gives the claim
back whole."""

from __future__ import annotations

import warnings

import conllu
import pypugjs
from pydifact.segmentcollection import Interchange

from ragsec_core.bench.held_out_export import page_text
from ragsec_core.bench.held_out_notations import EDIFACT_PIECE, EDIFACT_PIECES, PUG_WIDTH, _pug_escaped
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_bundle import TEXT
from .test_held_out_records import REC
from .test_held_out_source import drawn


def _rebuilt(sentence: conllu.TokenList) -> str:
    """A CoNLL-U sentence's text put back from its token rows: each form, then a space unless its row
    says `SpaceAfter=No`."""
    return "".join(t["form"] + ("" if (t["misc"] or {}).get("SpaceAfter") == "No" else " ") for t in sentence).rstrip()


def test_conllu_gives_the_claim_as_its_sentences_text_and_tokens():
    texts = drawn(REC, "conllu")
    for text in texts:
        sentences = conllu.parse(text + "\n\n")
        said = [s.metadata["text"] for s in sentences]
        assert said[-len(sentence_texts(TEXT)):] == sentence_texts(TEXT)
        assert said[0] == QUESTION or sentences[0].metadata["meta::title"] == QUESTION
        for s in sentences:
            assert _rebuilt(s) == s.metadata["text"]
            assert [t["head"] for t in s] == [0] + [1] * (len(s) - 1)  # one root, a tree
        assert sum(t["form"] == REC.incorrect for s in sentences for t in s) == 1  # the answer one token, never cut
    assert {text.startswith("# newdoc") for text in texts} == {True, False}


def test_edifact_gives_the_claim_as_free_text_pieces_with_their_releases_undone():
    texts = drawn(REC, "edifact")
    for text in texts:
        with warnings.catch_warnings():  # pydifact warns that it has no D.96A directory to validate against
            warnings.simplefilter("ignore")
            segments = list(Interchange.from_str(text).segments)
        free = [s.elements for s in segments if s.tag == "FTX"]
        question, *claim = ([e[3]] if isinstance(e[3], str) else e[3] for e in free)
        assert " ".join(question) == QUESTION and [e[0] for e in free] == ["AAI"] + ["ACB"] * len(claim)
        pieces = [p for segment in claim for p in segment]
        assert " ".join(pieces) == TEXT and all(len(p) <= EDIFACT_PIECE for p in pieces)
        assert all(len(segment) <= EDIFACT_PIECES for segment in claim)
        [trailer] = [s for s in segments if s.tag == "UNT"]
        assert int(trailer.elements[0]) == len(segments) - [s.tag for s in segments].index("UNH")
    assert {"\n" in text for text in texts} == {True, False}  # a segment a line, or the wire's one line


def test_pug_renders_the_question_then_the_claim():
    texts = drawn(REC, "pug")
    for text in texts:
        plain = " ".join(page_text(pypugjs.simple_convert(text)).split())  # its entities undone
        assert plain == f"{QUESTION} {TEXT}"
        assert all(len(line) <= PUG_WIDTH for line in text.split("\n") if not line.lstrip().startswith("|"))
    assert {text.startswith("article") for text in texts} == {True, False}


def test_pug_escapes_interpolation_and_html_outside_the_answer():
    assert _pug_escaped("a #{x}, #[em y] and !{z} <b> & c") == "a \\#{x}, \\#[em y] and \\!{z} &lt;b&gt; &amp; c"
