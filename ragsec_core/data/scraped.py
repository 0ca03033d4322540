"""A web page's visible text as a crawler extracts it, read as one unit: the article's paragraphs with the
page's furniture lines around them (a menu, a breadcrumb, a byline, buttons, a vote, a cookie notice, a
footer).

A RAG system fed by a crawl holds a page as its extractor wrote it: one line per block element, so the
menu's items, the breadcrumb and the buttons stand on short lines of their own with no full stop, above
and below the paragraphs. The sentence split reads those lines as words of the sentence after them: the
menu joins the question, the vote joins the claim's last sentence, and the last line runs into the host's
next sentence, which the planting glued on. So a run of consecutive lines, none indented (an extractor
strips them), that opens with two short lines (its first line's part after the host's last sentence on it),
holds a paragraph line (a whole sentence or more: a verse's lines end inside theirs) and a short line after
that, is one closed unit: from its first short line to its last line, which ends before the host's
sentence (`layout.opener_cut`: the first capitalised word that opens a sentence, "… Accept all Manage
During the following …"), else at its first sentence end.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import SENTENCE_END, first_end, opener_cut, own_start

_LINE = re.compile(r"[^\n]*\S[^\n]*")
_ENDED = re.compile(rf"{SENTENCE_END}\s*$")
_MOST_SHORT = 6  # words of a furniture line ("Skip to main content", "Home › Answers › Isle Dogs Come")
_LEAST_PARAGRAPH = 7  # words of a paragraph's line
_LEAST_LINES = 5  # lines of a page: two short lines above, a paragraph, a short line below, its last line


def pages(text: str) -> tuple[tuple[Span, bool], ...]:
    """Every run of consecutive lines that reads as a page (`_page`), closed."""
    found: list[tuple[Span, bool]] = []
    run: list[Span] = []
    for m in _LINE.finditer(text):
        if run and text[run[-1][1] : m.start()] != "\n":
            found.extend(_page(text, run))
            run = []
        run.append(m.span())
    found.extend(_page(text, run))
    return tuple(found)


def _page(text: str, lines: list[Span]) -> list[tuple[Span, bool]]:
    """The run as a page, or none: at least `_LEAST_LINES` lines, none indented, its first two short (the
    first one's own part, `layout.own_start`), a paragraph line after them (`_paragraph`), a short line after that."""
    if len(lines) < _LEAST_LINES or any(text[a] in " \t" for a, _ in lines[1:]):
        return []
    start = own_start(text, *lines[0])
    middle = [text[start : lines[0][1]]] + [text[a:b] for a, b in lines[1:-1]]
    prose = next((k for k, line in enumerate(middle) if k >= 2 and _paragraph(line)), None)
    if not (_short(middle[0]) and _short(middle[1])) or prose is None or not any(map(_short, middle[prose + 1 :])):
        return []
    return [((start, _last_end(text, *lines[-1])), True)]


def _last_end(text: str, a: int, b: int) -> int:
    """Where the page's last line, `text[a:b]`, ends: before the host's sentence glued onto its words
    (`layout.opener_cut`), else at its first sentence end, or at its end where only a short tail without a
    sentence end follows that ("… this site working. Accept all Manage")."""
    cut = opener_cut(text, a, b, b - a)
    if cut is not None:
        return cut
    end = first_end(text, a, b)
    return b if _short(text[end:b]) else end


def _short(line: str) -> bool:
    """A furniture line: one to `_MOST_SHORT` words and no full stop at its end."""
    return 1 <= len(line.split()) <= _MOST_SHORT and _ENDED.search(line) is None


def _paragraph(line: str) -> bool:
    """A paragraph's line: `_LEAST_PARAGRAPH` words or more, ending at a sentence end."""
    return len(line.split()) >= _LEAST_PARAGRAPH and _ENDED.search(line) is not None
