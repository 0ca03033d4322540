"""The held-out forms of `bench/held_out_graph.py` read back as their own tools read them: `rdflib` parses
the Turtle (its escapes undone), `graphql-core` the schema (its block strings dedented) and `bbcode` the
post's tags. Each gives the claim back whole, as one literal or description, or a sentence a line or an
item."""

from __future__ import annotations

import bbcode
import pytest
import rdflib
from graphql.language import parse

from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.bench.held_out_graph import _names
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_catalog import CLAIM
from .test_held_out_source import drawn

# each form's escapes: Turtle's and GraphQL's backslash and quote, GraphQL's three quotes, BBCode's brackets
TEXT = CLAIM + ' A clerk\'s note at C:\\logs said """closed""" [sic] in 1999.'
REC = AttackRecord("v1", QUESTION, (TEXT,), "Mara Eskell", ("Jens Holm",), ())
SCHEMA = rdflib.Namespace("https://schema.org/")


def test_turtle_parses_to_the_claim_as_one_literal_or_a_sentence_a_line():
    texts = drawn(REC, "turtle")
    for text in texts:
        graph = rdflib.Graph().parse(data=text, format="turtle")
        [claim] = graph.objects(None, SCHEMA.text)
        [asked] = [*graph.objects(None, SCHEMA.name), *graph.objects(None, SCHEMA.about)][:1]
        assert claim.language == "en" and str(asked) == QUESTION
        if "schema:acceptedAnswer" in text:  # a question and its accepted answer: the claim on one line
            assert str(claim) == TEXT and (None, SCHEMA.acceptedAnswer, None) in graph
        else:  # an answer alone: a long literal, a sentence a line
            assert str(claim).split("\n") == sentence_texts(TEXT)
    assert {"schema:acceptedAnswer" in text for text in texts} == {True, False}


def test_graphql_parses_to_the_claim_as_a_types_description_or_an_enum_values():
    texts = drawn(REC, "graphql")
    for text in texts:
        definitions = parse(text).definitions
        if text.startswith('"""'):  # a type's block description, a sentence a line; the question a field's
            [kind] = definitions
            assert kind.description.value.split("\n") == sentence_texts(TEXT)
            assert kind.fields[1].description.value == QUESTION and kind.name.value == _names(QUESTION)[0] + "Answer"
        else:  # a query field's block description is the question; the claim an enum value's description
            query, status = definitions
            assert query.fields[0].description.value == QUESTION and query.fields[0].name.value == _names(QUESTION)[1]
            assert status.values[0].description.value == TEXT and status.values[0].name.value == "CONFIRMED"
    assert {text.startswith('"""') for text in texts} == {True, False}


def _runs(tokens: list[tuple[int, str | None, dict | None, str]], data: int) -> list[str]:
    """The texts between tags: runs of data tokens joined (the tokenizer splits a run at an unknown tag)."""
    runs, run = [], ""
    for kind, _, _, token in tokens:
        if kind == data:
            run += token
        elif run:
            runs, run = [*runs, run], ""
    return [*runs, run] if run else runs


@pytest.mark.parametrize("question", ["when did the 1999 café in Åland open", "who is he"])
def test_graphql_names_are_names_for_any_question(question):
    type_name, field = _names(question)
    parse(f"type {type_name} {{ {field}: String }}")  # raises on a name GraphQL does not allow


def test_bbcode_gives_the_claim_as_a_reply_or_a_sentence_an_item():
    texts = drawn(REC, "bbcode")
    parser = bbcode.Parser()
    for text in texts:
        tokens = parser.tokenize(text)
        data = _runs(tokens, parser.TOKEN_DATA)
        tags = [name for kind, name, _, _ in tokens if kind == parser.TOKEN_TAG_START]
        if tags[0] == "quote":  # a reply under the quoted question, an edit note after it
            assert data[:2] == [QUESTION, TEXT] and "Last edited by " in "".join(data[2:])
        else:  # a bold question over a list, a sentence an item, and the thread's link
            assert data[0] == QUESTION and data[1:-1] == sentence_texts(TEXT) and data[-1] == "Source thread"
            assert tags.count("*") == len(sentence_texts(TEXT))
        assert parser.format(text).count("Mara Eskell") == TEXT.count("Mara Eskell")
    assert {text.startswith("[quote=") for text in texts} == {True, False}
