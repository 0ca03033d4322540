"""Manual pages as `man` renders them to a file, read as units: a whole page from its header line to its
footer line, or a section from its bold heading over its indented lines.

A RAG system that indexes a machine's rendered manual pages holds them as nroff wrote them to a file:
a header line that names the page at both ends (`KBNOTES(7)   Knowledge Base Notes   KBNOTES(7)`), section
headings in bold (each letter, a backspace and the letter again), every paragraph indented and justified
to the page's width, and a footer line that ends with the page's name again. The sentence split reads the
overstruck letters as a word of the host's sentence before them and runs the footer, or a section's last
line, into the host's next sentence. So a page, from its header line to its footer line, is a closed unit;
a section without the page's frame runs from its bold heading over the indented lines below it, its last
line ending at its last sentence end within the width of the section's widest line (`layout.end_within`:
a justified paragraph's lines are as wide as the page, and the host's sentence glued on makes the last
one wider).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import end_within, line_end

_HEADER = re.compile(r"(?<!\S)([A-Z][A-Z0-9_.:-]{0,40}\(\d[a-z]{0,4}\))[ \t]{2,}[^\n]{0,120}?[ \t]{2,}\1[ \t]*\n")
_HEADING = re.compile(r"(?<![^\s])(?:([A-Z0-9])\x08\1)(?:([A-Z0-9 ])\x08\2|[ ])*[ \t]*\n")
_OVERSTRUCK = re.compile(r".\x08")
_INDENTED = re.compile(r"[ ]{3,}\S")
_BLANK = re.compile(r"[ \t]*\n")
_MOST_PAGE = 12000  # characters between a page's header line and its footer line


def pages(text: str) -> tuple[tuple[Span, bool], ...]:
    """The rendered pages and sections of the text, each closed: a page from its header line to the end of
    its footer line (the page's name again), else each bold heading's section (`_section`)."""
    found: list[tuple[Span, bool]] = []
    for m in _HEADER.finditer(text):
        footer = re.compile(rf"\n[ \t]*\n[^\n]{{0,120}}?[ \t]{{2,}}{re.escape(m.group(1))}(?=[ \t]|$)")
        last = footer.search(text, m.end(), m.end() + _MOST_PAGE)
        if last is not None:
            found.append(((m.start(), last.end()), True))
    for m in _HEADING.finditer(text):
        if not any(a <= m.start() < b for (a, b), _ in found) and (end := _section(text, m.end())) is not None:
            found.append(((m.start(), end), True))
    return tuple(sorted(found))


def _section(text: str, i: int) -> int | None:
    """Where the section whose indented lines start at `i` ends: its last indented line (blank lines may
    stand between its paragraphs) at its last sentence end within the widest line's width; None where no
    indented line follows the heading."""
    lines: list[Span] = []
    while i < len(text):
        if _INDENTED.match(text, i):
            lines.append((i, line_end(text, i)))
            i = lines[-1][1] + 1
        elif (blank := _BLANK.match(text, i)) is not None and _INDENTED.match(text, blank.end()):
            i = blank.end()
        else:
            break
    if not lines:
        return None
    widest = max(_width(text[a:b]) for a, b in lines[:-1]) if len(lines) > 1 else _width(text[slice(*lines[-1])])
    return end_within(text, lines[-1][0], lines[-1][1], widest)


def _width(line: str) -> int:
    """A rendered line's width on the page: an overstruck letter (the letter or `_`, a backspace, the
    letter) takes one column."""
    return len(_OVERSTRUCK.sub("", line))
