"""Perl's documentation markup (POD) inside a passage, read as units: from a block's first command paragraph
to the command that closes it.

A RAG system that indexes a Perl project's modules or its manual's source holds POD as written: command
paragraphs (`=encoding UTF-8`, `=head1 NAME`, `=over 4`, `=item * …`) and text paragraphs between them,
each after a blank line, the block closed by `=cut` (back to code) or a list by `=back`. The sentence split
reads a command as a word of the sentence around it and glues the host's next sentence onto `=back`. So a
POD block is one unit, from its first command (the first may follow the host's sentence on its line) over
every paragraph whose command opens a line after a blank one, closed right after its last `=cut`, `=back`
or `=end` (a closing command takes no text but `=end`'s format name); a block whose last command closes
nothing runs over the paragraph after it, its last line to its first sentence end.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import last_line_end, line_end

_COMMANDS = r"=(?:pod|encoding|head[1-6]|over|item|begin|for)\b[^\n]*\n[ \t]*\n"
# a block's first command opens its line or follows a sentence end, or follows any space where the next
# paragraph is a command too (`=encoding UTF-8` glued after a citation mark, "….[5] =encoding UTF-8")
_OPENING = re.compile(rf"(?:(?:(?<=\n)|(?<![\s\S])|(?<=[.!?] )|(?<=[.!?][\"')\]] )){_COMMANDS}|(?<=\s){_COMMANDS}(?==[a-z]))")
_NEXT = re.compile(r"\n[ \t]*\n=(pod|encoding|head[1-6]|over|item|begin|for|back|cut|end)\b")  # the next command
_CLOSING = re.compile(r"=(?:cut|back)\b|=end[ \t]+[\w:-]{1,30}")
_MOST_BETWEEN = 3000  # characters of text paragraphs between two commands of one block


def blocks(text: str) -> tuple[tuple[Span, bool], ...]:
    """The POD blocks of the text, each with whether it is closed: from the first command to the last
    closing command right after it (closed), else over the paragraph after its last command (open)."""
    found: list[tuple[Span, bool]] = []
    i = 0
    while (m := _OPENING.search(text, i)) is not None:
        last = m.start()
        while (nxt := _NEXT.search(text, last + 1, last + 1 + _MOST_BETWEEN)) is not None:
            last = nxt.end() - len(nxt.group(1)) - 1
        closing = _CLOSING.match(text, last)
        if closing is not None:
            found.append(((m.start(), closing.end()), True))
        else:
            found.append(((m.start(), last_line_end(text, _last_line(text, last))), False))
        i = max(found[-1][0][1], m.end())
    return tuple(found)


def _last_line(text: str, command: int) -> int:
    """Where the last line of the paragraph after the command at `command` starts (the command's own line
    where no paragraph follows it)."""
    start = line_end(text, command) + 1
    while start < len(text) and not text[start : line_end(text, start)].strip():
        start = line_end(text, start) + 1
    if start >= len(text):
        return command
    while (stop := line_end(text, start)) < len(text) and text[stop + 1 : line_end(text, stop + 1)].strip():
        start = stop + 1
    return start
