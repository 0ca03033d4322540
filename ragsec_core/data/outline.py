"""Org-mode's outline inside a passage, read as units: a heading with the drawer or the block under it.

A personal notes folder holds Org files as their writer keeps them: a heading of stars (`* Title`,
`** TODO Check: …?`) with tags aligned right (`:kb:answers:`), a property drawer under it (`:PROPERTIES:`
… `:END:`) and the entry's text, or a block (`#+BEGIN_QUOTE` … `#+END_QUOTE`) around it. The sentence
split reads the stars as a list's bullet or as words of the host's sentence before, and the drawer's
lines as words of the text after, so the block starts below the heading. A heading with its drawer is one
unit that leads the entry's text in (`markup.lead_in`); a block, with the heading right above it where
there is one, is one closed unit, to its `#+END_` line (`entries`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span

_HEADING = r"(?<!\S)\*{1,6}[ \t]+[^\n]{1,400}\n[ \t]*"  # a heading's line: a question may run long
_DRAWER = r":PROPERTIES:[ \t]*\n(?:[ \t]*:[\w-]+:[^\n]*\n)*?[ \t]*:END:"
_BLOCK = r"#\+BEGIN_(\w+)[^\n]*\n.*?\n[ \t]*#\+END_\1"
_TAGS = re.compile(r"(?<!\S)\*{1,6}[ \t]+[^\n]{1,400}?[ \t]+:[\w@:]+:[ \t]*(?=\n|$)")
_ENTRY = re.compile(rf"(?:{_HEADING})?(?:{_DRAWER}|{_BLOCK})", re.DOTALL | re.IGNORECASE)
_MAX_BLOCK = 8000  # characters of a block: a longer match is read as no block's


def entries(text: str) -> tuple[tuple[Span, bool], ...]:
    """The Org entries' heads of the text, each with whether it is closed: a heading with its drawer (open:
    the entry's text follows) or a block with the heading above it (closed at `#+END_`), and a heading
    with tags and nothing of these under it (open)."""
    found: list[tuple[Span, bool]] = []
    for m in _ENTRY.finditer(text):
        if m.end() - m.start() <= _MAX_BLOCK:
            found.append((m.span(), m.group(1) is not None))
    for m in _TAGS.finditer(text):
        if not any(a <= m.start() < b for (a, b), _ in found):
            found.append((m.span(), False))
    return tuple(sorted(found))
