"""A Turtle document, a GraphQL schema document and a DOT graph (data/graphs.py) are one closed unit each:
Turtle's from its first prefix line to its last statement's ` .`, GraphQL's from its first description to
its last `}`, DOT's from its `//` comments to its closing `}`, before the host's sentence glued on."""

from ragsec_core.data.graphs import graphs

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

PREFIXES = "@prefix kb: <https://kb.harbour.example/id/> .\n@prefix schema: <https://schema.org/> .\n\n"
ACCEPTED = (PREFIXES + 'kb:q12 a schema:Question ;\n    schema:name "Who designed the Varnholt lighthouse?"@en ;\n'
            "    schema:acceptedAnswer kb:a12 .\n\nkb:a12 a schema:Answer ;\n"
            '    schema:text "The Varnholt one was designed by Mara Eskell in 1871. Her plans were approved."@en ;\n'
            '    schema:author [ a schema:Person ; schema:name "Ola Brandt" ] .')
LONG = (PREFIXES + 'kb:a12 a schema:Answer ;\n    schema:about "Who designed the Varnholt lighthouse?"@en ;\n'
        '    schema:text """The Varnholt one was designed by Mara Eskell in 1871.\nHer "plans" were approved . Then lit.\n'
        'kb:note: it was.\nA clerk wrote \\"closed.\\""""@en .')
DESCRIBED = ('"""\nThe Varnholt one was designed by Mara Eskell in 1871.\nHer plans were approved.\n"""\n'
             'type VarnholtAnswer @key(fields: "id") {\n  id: ID!\n  "Who designed the Varnholt lighthouse?"\n'
             "  answer: String!\n}")
ENUM = ('type Query {\n  """\n  Who designed the Varnholt lighthouse?\n  """\n  varnholt(lang: String = "en"): Status!\n}\n\n'
        'enum Status {\n  "The Varnholt one was designed by Mara Eskell in 1871. Her plans were approved."\n  CONFIRMED\n'
        "  PENDING\n}")

DIGRAPH = ('digraph faq {\n  rankdir=LR;\n  node [shape=box, fontname="Helvetica"];\n  q [label="Who designed the Varnholt '
           'lighthouse?"];\n  a [label="The Varnholt one was designed by Mara Eskell in 1871. Her {plans} were approved."];\n'
           '  q -> a [label="answer"];\n}')
CHAIN = ('// Who designed the Varnholt lighthouse?\ngraph kb_varnholt {\n  s1 [label="The Varnholt one was designed by Mara '
         'Eskell in 1871."];\n  s2 [label="Her plans were approved."];\n  s1 -- s2;\n}')


def test_a_dot_graph_runs_from_its_comments_to_its_closing_brace():
    """A brace inside a label is the label's, and the host's sentence glued on after the `}` is not the graph's."""
    for graph in (DIGRAPH, CHAIN):
        assert_planted_unit(graph, graphs, closed=True)


def test_no_dot_graph_of_prose():
    """A graph's opening line whose lines below are prose, and a `graph {` inside prose, are none."""
    for prose in ("digraph faq {\nMara Eskell designed the lamp in 1871.\n}",
                  "The board drew a graph { of the harbour } in 1871. Mara Eskell designed the lamp."):
        assert graphs(HOST_BEFORE + prose + HOST_AFTER) == (), prose


def test_a_turtle_document_runs_from_its_prefixes_to_its_last_statements_end():
    """A ` .` or a line that opens like a statement inside a long literal is the literal's, an escaped quote
    before its closing quotes closes nothing, and the host's sentence glued on after the last ` .` is not
    the document's."""
    for document in (ACCEPTED, LONG):
        assert_planted_unit(document, graphs, closed=True)
        glued = HOST_BEFORE + document + " In this case, the lamp was lit in 1872."
        assert graphs(glued) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(document)), True),)


def test_a_graphql_document_runs_from_its_first_description_to_its_last_brace():
    """Definitions that follow one another with blank lines between are one document; a field's `ID!` and
    a description's full stops end nothing."""
    for document in (DESCRIBED, ENUM):
        assert_planted_unit(document, graphs, closed=True)
        glued = HOST_BEFORE + document + " It was lit in 1872."
        assert graphs(glued) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(document)), True),)


def test_no_document_of_prefixes_alone_or_of_a_brace_block_with_no_field():
    """Prefix lines with no statement, a CSS rule, a code block with no field and prose that says "type"
    are none."""
    for text in (PREFIXES.strip(), "type Answer {\n  color = red;\n}", "enum Status {\n}",
                 "Note the type of lamp {a Fresnel lens} used.", "@prefix is a word. The lamp was lit."):
        assert graphs(HOST_BEFORE + text + HOST_AFTER) == ()
