"""A knowledge graph's Turtle, an API's GraphQL schema and a diagram's Graphviz DOT source, each read as one unit.

A RAG system over a knowledge graph's dump or an API's documentation holds statements and definitions as
their writers lay them out. Turtle: prefix lines (`@prefix kb: <…> .`), then statements, a subject and its
predicate-object pairs over indented lines, each closed by a ` .`, their literals in quotes or, across
lines, in triple quotes. GraphQL's schema language: definitions (`type …`, `enum …`) whose bodies sit
between `{` and a `}` at the opener's indent, each with a description above it (a quoted line, or a block
string in triple quotes). The sentence split reads neither: it cuts a literal or a description at its
full stops, a field's `ID!` reads to it as a sentence's end, and the last statement or brace runs into the
host's sentence that the planting glued on. DOT: `digraph name {` (or `graph`, `strict` first), then node,
edge and attribute statements on indented lines (`a [label="…"];`, `q -> a;`, `rankdir=LR;`), the claim in
a quoted `label`, to a `}` at the opener's indent, `//` comments above. So a Turtle document (a prefix line and the statements after
it) is one closed unit that ends at its last statement's ` .`, and a GraphQL document (definitions, their
descriptions and the blank lines between them) one that ends at its last `}`, and a DOT graph one from its comments to its closing `}`.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span, Unit, outermost
from ragsec_core.data.configs import brace_body_end
from ragsec_core.data.datafiles import SLASH_COMMENTS, SLASHES, document_start
from ragsec_core.data.layout import MOST_LINES, line_end, line_start

_PREFIX = re.compile(r"(?<!\S)(?:@prefix|@base)[ \t]+[^\n]{0,300}\.[ \t]*(?:\n|$)|(?<!\S)(?:PREFIX|BASE)[ \t][^\n]{1,300}>[ \t]*\n")
_STATEMENT_LEVEL = re.compile(r"(?:@prefix|@base|PREFIX|BASE)[ \t]|[A-Za-z_][\w.-]{0,40}:|<|_:|\[|\(|#")  # what opens a line between statements
_KINDS = r"(?:extend[ \t]+)?(?:type|interface|input|enum|union|scalar|schema|directive)"
DEFINITION = rf"{_KINDS}\b[^\n{{}}]{{0,200}}\{{[ \t]*\n"  # `type Answer @key(fields: "id") {` (glue's too)
# a block description right above its definition (glue's too: a CSV cell's `."""` ending a line is none)
BLOCK_DESCRIPTION = rf'"""[ \t]*\n(?:(?![ \t]*""")[^\n]*\n){{0,{MOST_LINES}}}[ \t]*"""[ \t]*\n(?={_KINDS}\b)'
_OPENER = re.compile(rf"(?<!\S){DEFINITION}")
_DESCRIBED = re.compile(rf'(?<!\S)(?:{BLOCK_DESCRIPTION}|"(?:[^"\\\n]|\\.)*"[ \t]*\n(?={_KINDS}\b))')
_FIELD = re.compile(r'[ \t]+(?:[A-Za-z_]\w*[ \t]*(?:\([^\n]*\))?[ \t]*:[ \t]*[\[A-Za-z_]|[A-Z_][A-Z0-9_]*[ \t]*(?:@|$))')
_BLANKS = re.compile(r"(?:[ \t]*\n)*")
_DOT_ID = r'(?:[A-Za-z_\d][\w.]{0,60}|"(?:[^"\\\n]|\\.)*")'  # a node's or a graph's name: a word, a number or a quoted string
# a graph's opening line (`digraph faq {`), the `//` comment lines above it (one blank line maybe between)
DOT_OPENER = rf"(?:strict[ \t]+)?(?:di)?graph(?:[ \t]+{_DOT_ID})?[ \t]*\{{[ \t]*\n"  # `digraph faq {` (glue's too)
_DOT_START = re.compile(rf"(?<!\S){SLASH_COMMENTS}(?P<open>{DOT_OPENER})")
_DOT_STATEMENT = re.compile(rf"[ \t]+{_DOT_ID}[ \t]*(?:\[|->|--|=|;|$)")  # `a [label="…"];`, `q -> a`, `rankdir=LR;`


def graphs(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's Turtle documents, GraphQL schema documents and DOT graphs, each closed (`turtle`, `schema`,
    `_dot`)."""
    return turtle(text) + schema(text) + outermost(_DOT_START, text, _dot)


def turtle(text: str) -> tuple[tuple[Span, bool], ...]:
    """Each Turtle document: from its first prefix line to the ` .` that ends its last statement, where the
    statements that follow the prefix lines (one at least) stop: at a line no statement opens, or where the
    host's words follow a statement's ` .` on its line."""
    return outermost(_PREFIX, text, _turtle_document)


def _turtle_document(text: str, prefix: re.Match[str]) -> Unit | None:
    """The Turtle document that `prefix` (its first prefix line) opens, or None where no statement follows."""
    end = _statements_end(text, prefix.start())
    return None if end is None else ((prefix.start(), end), True)


def _statements_end(text: str, start: int) -> int | None:
    """Where the last statement after `start` ends (after its ` .`), or None where no statement but the
    prefix lines ends."""
    i, last, statements, inside, state = start, None, 0, False, ""  # inside: a statement begun, not ended
    for _ in range(MOST_LINES):
        if i >= len(text):
            break
        stop = line_end(text, i)
        line = text[i:stop]
        if not inside and not state and line.strip() and not _STATEMENT_LEVEL.match(line):
            break
        state, ends = _scan(line, state)
        prefix = _PREFIX.match(line) is not None
        if ends:
            statements, last = statements + (not prefix) * len(ends), i + ends[-1]
            if line[ends[-1]:].strip():  # the host's words glued on after the last ` .`
                break
        inside = bool(state) or (not ends and not prefix and (inside or bool(line.strip())))
        i = stop + 1
    return last if statements else None


def _scan(line: str, state: str) -> tuple[str, list[int]]:
    """The line read from its start with `state` the literal open there: (the literal open at its end, the
    offsets just after each statement-ending ` .` outside any literal)."""
    ends: list[int] = []
    k = 0
    while k < len(line):
        if state and line[k] == "\\":  # an escape inside a literal: an escaped quote closes nothing
            k += 2
        elif state and line.startswith(state, k):
            state, k = "", k + len(state)
        elif state:
            k += 1
        elif line.startswith('"""', k):
            state, k = '"""', k + 3
        elif line[k] == '"':
            state, k = '"', k + 1
        else:
            if line[k] == "." and (k == 0 or line[k - 1] in " \t") and (k + 1 == len(line) or line[k + 1] in " \t"):
                ends.append(k + 1)
            k += 1
    return state, ends


def schema(text: str) -> tuple[tuple[Span, bool], ...]:
    """Each GraphQL document: from the first definition's description (or its opener) to the `}` that
    closes the last of the definitions that follow one another, blank lines and descriptions between."""
    return outermost(_OPENER, text, _schema_document)


def _schema_document(text: str, opener: re.Match[str]) -> Unit | None:
    """The GraphQL document whose first definition `opener` opens, from its description over the
    definitions that follow (`_next_definition`), or None where the first has no body."""
    end = brace_body_end(text, opener, _FIELD)
    if end is None:
        return None
    while (nxt := _next_definition(text, end)) is not None and (more := brace_body_end(text, nxt, _FIELD)) is not None:
        end = more
    return (_described_from(text, opener.start()), end), True


def _described_from(text: str, opener: int) -> int:
    """Where the definition opening at `opener` starts: at its description right above it, if any (a quoted
    line, or a block string whose opening quotes end a line, maybe after the host's sentence)."""
    above = line_start(text, max(0, opener - 1))
    if text[above:opener].strip() != '"""':
        quoted = _DESCRIBED.match(text, above)
        return above if quoted and quoted.end() == opener else opener
    start = above
    for _ in range(MOST_LINES):
        if start == 0:
            return opener
        start = line_start(text, start - 1)
        line = text[start : line_end(text, start)]
        if line.rstrip().endswith('"""'):
            at = start + line.rstrip().rindex('"""')
            block = _DESCRIBED.match(text, at)
            return at if block and block.end() == opener else opener
    return opener


def _next_definition(text: str, end: int) -> re.Match[str] | None:
    """The opener of a definition that follows the one ending at `end` on a later line, after blank lines and
    its description."""
    if text[end : end + 1] != "\n":
        return None
    blanks = _BLANKS.match(text, end + 1)
    at = blanks.end() if blanks else end + 1
    described = _DESCRIBED.match(text, at)
    return _OPENER.match(text, described.end() if described else at)


def _dot(text: str, opener: re.Match[str]) -> Unit | None:
    """The DOT graph that `opener` opens, from the `//` comments above it (`datafiles.document_start`) to
    the `}` at its own indent that closes its statements (`brace_body_end`), or None where none does."""
    end = brace_body_end(text, opener, _DOT_STATEMENT)
    return None if end is None else ((document_start(text, opener, SLASHES), end), True)
