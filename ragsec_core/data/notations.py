"""A notation made for machines inside a passage: a CoNLL-U annotation, a UN/EDIFACT interchange and a Pug
template, each read as one unit.

An NLP team's treebank, a supply chain's message archive and a web project's templates are indexed as they
are written, and none of them is prose the sentence split reads. CoNLL-U is comment lines (`# sent_id = …`,
`# text = …`) above a sentence's token rows, ten tab-separated columns a word, a blank line between
sentences: the split runs one sentence over every row to the next full stop's row. EDIFACT is segments,
each a three-letter tag and its `+`-separated elements closed by an apostrophe (`FTX+ACB+++…'`), on lines
of their own or all on one: the split reads the service string advice (`UNA:+.? '`) and the headers into
the host's sentence before and the trailers (`UNT+6+1'UNZ+1+…'`) into the host's sentence after. Pug is
indented tag lines (`article.kb-answer`, `h3 …`, `p.`) over a paragraph's text in a dotted block or behind
`|` pipes: the split reads the tag lines into the first sentence of the text below them.

So each is one unit: CoNLL-U from its first comment line over its comments, rows and single blank lines to
the last row's last column (closed: a column holds no space, so the host's words glued on after it stay
out); EDIFACT from `UNA` or the first `UNB`/`UNH` segment over its segments, read with the delimiters the
`UNA` names and the release mark honoured, to the apostrophe that closes `UNZ` or its last segment (closed);
Pug from a bare tag line, or the `//` comment above one, whose next line is a tag or a pipe indented
deeper, over the lines indented deeper than it to the last line's first sentence end (open, as a filled
paragraph has no width of its own: `last_line_end`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import OWN_LINE, Unit, outermost, outermost_of
from ragsec_core.data.layout import LINE_BREAK, MOST_LINES, last_line_end, line_end

# CoNLL-U: a document's or a sentence's comment line; a token row (an id, a range or an empty node's, then
# nine more tab-separated columns)
_CONLLU_OPEN = re.compile(OWN_LINE + r"#[ \t]*(?:newdoc|newpar|global\.columns|sent_id|text)\b")
_CONLLU_COMMENT = re.compile(r"#[^\n]*")
_TOKEN_ROW = re.compile(r"\d+(?:[-.]\d+)?\t[^\t\n]+(?:\t[^\t\n]*){7}\t(\S*)")
# EDIFACT: the service string advice (its six marks), or a first interchange or message header
_EDIFACT_OPEN = re.compile(OWN_LINE + r"(?:UNA[^\w\n]{6}|UN[BH]\+)")
_TAG = re.compile(r"[A-Z][A-Z0-9]{2}")
_DEFAULT_MARKS = ":+.? '"  # component, element, decimal, release, reserved, segment terminator
_SEGMENT_CHARS = 4000  # a segment's characters, at most (five free-text pieces of 512 and their marks)
# Pug: an HTML element's tag line (tag or selector, attributes, then nothing, a dotted block's `.`, or text)
_ELEMENTS = frozenset("a abbr address article aside b blockquote body br button caption cite code dd details div dl dt "
                      "em figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hr html i img input label li "
                      "main nav ol p pre q section small span strong sub summary sup table tbody td th thead time tr "
                      "u ul".split())
_PUG_OTHER = re.compile(r"\|(?:[ \t][^\n]*)?$|//-?[^\n]*$|\+[\w-]+(?:\([^)\n]{0,300}\))?$")  # a pipe, a comment, a mixin call
_CLASS, _ID = r"\.[\w-]*[A-Za-z_][\w-]*", r"#[\w-]+"  # `.faq-entry` (a letter in it), `#2017-season`
_SELECTORS = rf"(?:{_CLASS}|{_ID})*(?:\([^)\n]{{0,300}}\))?"  # then the attributes: `(href="…")`
# an element's name, or none before a class or an id (a `div`)
_NAME = r"(?:(?P<tag>" + "|".join(sorted(_ELEMENTS, key=len, reverse=True)) + rf")(?![\w-])|(?={_CLASS}|{_ID}))"
_PUG_TAG = re.compile(_NAME + _SELECTORS + r"(?P<text>\.?$|:?[ \t][^\n]*$)")  # then nothing, a block's `.`, or text
_PUG_OPEN = re.compile(OWN_LINE + r"(?://-?[^\n]*\n)?(?P<line>" + _NAME + _SELECTORS + r")[ \t]*\n(?P<indent>[ \t]+)(?:\||[a-z.#+])")


def notations(text: str) -> tuple[Unit, ...]:
    """The text's CoNLL-U annotations, EDIFACT interchanges and Pug templates, each a unit (`_conllu`,
    `_edifact`, `_pug`), outermost across the three."""
    return outermost_of(outermost(_CONLLU_OPEN, text, _conllu), outermost(_EDIFACT_OPEN, text, _edifact),
                        outermost(_PUG_OPEN, text, _pug))


def _conllu(text: str, opener: re.Match[str]) -> Unit | None:
    """The CoNLL-U annotation `opener` opens: comment lines, token rows and single blank lines between
    sentences, to the last token row's last column (closed); None where no token row follows."""
    i, end, blank = opener.start(), None, False
    for _ in range(MOST_LINES):
        stop = line_end(text, i)
        if (row := _TOKEN_ROW.match(text, i, stop)) is not None:
            end, blank = row.end(), False
        elif _CONLLU_COMMENT.fullmatch(text, i, stop) is not None:
            blank = False
        elif text[i:stop].strip() or blank or end is None:
            break  # a line of neither, or two blank lines: the annotation has ended
        else:
            blank = True
        if stop >= len(text):
            break
        i = stop + 1
    return None if end is None else ((opener.start(), end), True)


def _edifact(text: str, opener: re.Match[str]) -> Unit | None:
    """The EDIFACT interchange `opener` opens: segments a line or run together, read with the marks its
    service string advice names (else the standard's), to the terminator of `UNZ` or of its last segment
    (closed); None where fewer than two segments follow."""
    end, marks = opener.start(), _DEFAULT_MARKS
    if text.startswith("UNA", end):
        marks, end = text[end + 3 : end + 9], end + 9
    segments = 0
    while segments < MOST_LINES:
        start = brk.end() if (brk := LINE_BREAK.match(text, end)) is not None else end  # a segment a line
        close = _segment(text, start, marks)
        if close is None:
            break
        end, segments = close, segments + 1
        if text.startswith("UNZ", start):
            break
    return ((opener.start(), end), True) if segments >= 2 else None


def _segment(text: str, i: int, marks: str) -> int | None:
    """Where the segment that starts at `i` ends: after the first of its terminators on its line (a mark
    behind the release mark is text) that a line break, the text's end or the next segment's tag follows,
    else after its first terminator (a name's apostrophe left unreleased, "Levi's", is text where a later
    terminator closes the segment); None where no tag opens one there or no terminator closes it."""
    if not _opens_segment(text, i, marks):
        return None
    ends, j, stop = [], i + 3, min(len(text), i + _SEGMENT_CHARS)
    while j < stop and text[j] != "\n":
        if text[j] == marks[5]:
            ends.append(j + 1)
        j += 2 if text[j] == marks[3] else 1
    closing = (e for e in ends if e == len(text) or text[e] in "\r\n" or _opens_segment(text, e, marks))
    return next(closing, ends[0] if ends else None)


def _opens_segment(text: str, i: int, marks: str) -> bool:
    """Whether a segment's tag opens at `i`: three capitals or digits, the first a capital, then an element
    separator or the terminator."""
    return _TAG.match(text, i) is not None and text[i + 3 : i + 4] in (marks[1], marks[5])


def _pug(text: str, opener: re.Match[str]) -> Unit | None:
    """The Pug template `opener` opens: its bare tag line naming an HTML element (and the comment above it),
    then every line indented deeper than it, a tag naming an HTML element, a pipe, a comment, a mixin call
    or a dotted block's text, to the last line's first sentence end (open: `last_line_end`); None where
    fewer than two lines follow it or none of them holds text (a pipe's, a tag's or a dotted block's)."""
    i, last, lines, block, text_lines = opener.start("indent"), None, 0, None, 0
    while i < len(text) and lines < MOST_LINES:
        stop = line_end(text, i)
        body = text[i:stop].lstrip(" \t")
        indent = stop - i - len(body)
        if not body.strip() or indent == 0:
            break
        tag = _PUG_TAG.match(body.rstrip())
        if block is not None and indent > block:
            text_lines += 1  # a dotted block's text
        elif tag is not None or _PUG_OTHER.match(body) is not None:
            text_lines += body.startswith("|") or (tag is not None and len(tag.group("text")) > 1)
            block = indent if tag is not None and tag.group("text") == "." else None
        else:
            break
        last, lines, i = i, lines + 1, stop + 1
    if last is None or lines < 2 or not text_lines:
        return None
    return (opener.start(), last_line_end(text, last)), False

