"""A framed block inside a passage, read as one unit: an ASCII table's box or a comment's banner.

A repository's source comments and a terminal's pasted output hold text inside a frame that pads its lines
to a width: `+----+` rules and `| … |` sides, or a C comment's `/****`, ` * … *` and `****/`. The sentence
split reads the frame's characters and the padding as words and spaces, so a block that starts at the
claim leaves the frame's top lines (the question) out and runs the bottom rule into the host's sentence
glued on after it. The frame says where it starts and ends: two or more lines in a row, each opened and
closed by a frame character, with the rule that ends the line above them (the planting glues it after the
host's sentence) and the rule that starts the line below. A framed block is one closed unit (`frames`,
`markup.closed_units`): a line wider than the others (a long question in its cell) is still the frame's.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span

_SIDES = re.compile(r"[ \t]*[+|*][^\n]*[+|*]")
_TOP = re.compile(r"(?:(?<=\s)|^)[+/]?[-=*]{10,}[+/]?$")  # a rule that ends the line above
_BOTTOM = re.compile(r"[ \t]*[+]?[-=*]{10,}[+/]?(?=\s|$)")  # a rule that starts the line below
MIN_WIDTH = 20  # characters of a frame's line: shorter lines are no frame's


def frames(text: str) -> tuple[Span, ...]:
    """The framed blocks of the text: each run of two or more lines opened and closed by frame characters
    (`_SIDES`), grown over the rule that ends the line above and the rule that starts the line below."""
    lines, starts, at = text.split("\n"), [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    found: list[Span] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and len(lines[j]) >= MIN_WIDTH and _SIDES.fullmatch(lines[j]):
            j += 1
        if j - i < 2:
            i += 1
            continue
        top = _TOP.search(lines[i - 1]) if i > 0 else None
        bottom = _BOTTOM.match(lines[j]) if j < len(lines) else None
        start = starts[i - 1] + top.start() if top is not None else starts[i]
        end = starts[j] + bottom.end() if bottom is not None else starts[j - 1] + len(lines[j - 1])
        found.append((start, end))
        i = j
    return tuple(found)
