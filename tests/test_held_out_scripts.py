"""The held-out forms of `bench/held_out_scripts.py` read back as their own tools read them: `pysubs2` loads
the subtitle script (its `\\N` breaks and override tags undone, as a player shows the text), `pydot` parses
the DOT graph and `kdl-py` the KDL document. Each gives the claim back whole, as one label or argument, or
a sentence a dialogue line, node or child."""

from __future__ import annotations

import kdl
import pydot
import pysubs2
import pytest
from pyparsing import ParserElement

from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_bundle import TEXT
from .test_held_out_records import REC
from .test_held_out_source import drawn


def test_ass_gives_the_question_then_a_sentence_a_dialogue_line():
    texts = drawn(REC, "ass")
    for text in texts:
        script = pysubs2.SSAFile.from_string(text, format_="ass")  # an excerpt of events has no header to tell
        shown = [line.plaintext.replace("\n", " ") for line in script.events]
        if text.startswith("[Script Info]"):  # a whole script: the question in italics, then a sentence a line
            assert shown == [QUESTION, *sentence_texts(TEXT)] and script.events[0].text.startswith("{\\i1}")
            assert script.info["Title"] and "Default" in script.styles
        else:  # an events section alone, each sentence broken once by \N
            assert shown == sentence_texts(TEXT) and all(line.text.count("\\N") == 1 for line in script.events)
        assert [line.start < line.end for line in script.events] == [True] * len(script.events)
    assert {text.startswith("[Script Info]") for text in texts} == {True, False}


@pytest.fixture
def dot_parser():
    """pydot's grammar built under pyparsing's own whitespace: `jira2markdown` (the jira form's reader)
    sets the process-wide default to none when imported, and pydot builds its grammar at its first parse
    with whatever default stands then; the default is put back after."""
    before = ParserElement.DEFAULT_WHITE_CHARS
    ParserElement.set_default_whitespace_chars(" \n\t\r")
    yield pydot.graph_from_dot_data
    ParserElement.set_default_whitespace_chars(before)


def _label(node: pydot.Node) -> str:
    """A node's label as Graphviz reads the quoted string: its quotes off, its escapes undone."""
    return node.get_label()[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def test_dot_gives_the_claim_as_one_label_or_a_node_a_sentence(dot_parser):
    texts = drawn(REC, "dot")
    for text in texts:
        [graph] = dot_parser(text)
        labels = {node.get_name(): _label(node) for node in graph.get_nodes() if node.get_label()}
        if graph.get_type() == "digraph":  # the answer node's label, an edge from the question's node
            assert labels == {"q": QUESTION, "a": TEXT}
            assert [(e.get_source(), e.get_destination()) for e in graph.get_edges()] == [("q", "a")]
        else:  # a node a sentence, chained by edges, the question a comment above
            assert list(labels.values()) == sentence_texts(TEXT) and text.startswith(f"// {QUESTION}\n")
    assert {text.startswith("digraph") for text in texts} == {True, False}


def test_kdl_gives_the_claim_as_one_answer_or_a_sentence_a_node():
    texts = drawn(REC, "kdl")
    for text in texts:
        [node] = kdl.parse(text).nodes
        children = {child.name: child.args for child in node.nodes}
        if node.name == "faq":  # the answer node's argument, beside the question's
            assert children["answer"] == [TEXT] and children["question"] == [QUESTION] and children["reviewed"] == [True]
        else:  # a sentence node a sentence, in a card with properties
            assert [child.args[0] for child in node.nodes] == sentence_texts(TEXT) and node.props["verified"] is True
    assert {text.startswith("faq") for text in texts} == {True, False}
