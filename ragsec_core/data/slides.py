"""A slide of a deck exported as text, read as one unit: its marker, title, bullets and speaker's notes.

A team's shared drive holds presentations, and a RAG system that indexes them reads each slide as the
export writes it: a marker line (`Slide 7 of 21`, `--- Slide 8 ---`), the title (maybe `Title: …`), the
bullets, then the speaker's notes (`Speaker notes: …`, `Notes: …`). The sentence split reads the marker as
words of the host's sentence it is glued to and runs the notes into the host's next sentence. The slide
is one writer's: from its marker to the end of its notes' first sentence, where the export ends it (a
closed unit), or, without notes, to its last line's first sentence end (`slides`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import last_line_end, line_end

_MARKER = re.compile(r"(?<!\S)(?:Slide[ \t]+\d{1,3}(?:[ \t]+(?:of|/)[ \t]+\d{1,3})?|-{2,}[ \t]*Slide[ \t]+\d{1,3}[ \t]*-{2,})"
                     r"[ \t]*\n")
_NOTES = re.compile(r"[ \t]*(?:Speaker[ \t]+)?[Nn]otes:[ \t]")
_MAX_LINES = 30  # lines of a slide read before it is taken for no slide's


def slides(text: str) -> tuple[tuple[Span, bool], ...]:
    """The slides of the text, each with whether it is closed: from its marker over its lines (to a blank
    line or the next marker) to its notes line's first sentence end (closed), or without notes to its last
    line's first sentence end."""
    found: list[tuple[Span, bool]] = []
    for m in _MARKER.finditer(text):
        i, last, closed = m.end(), m.end(), False
        for _ in range(_MAX_LINES):
            if i >= len(text) or not text[i:line_end(text, i)].strip() or _MARKER.match(text, i):
                break
            last = i
            if _NOTES.match(text, i):
                closed = True
                break
            i = line_end(text, i) + 1
        if last > m.end() or closed:
            found.append(((m.start(), last_line_end(text, last)), closed))
    return tuple(found)
