"""reStructuredText inside a passage, read as units: an underlined title, a directive with its indented
body, and a field list.

A documentation project's tree holds its pages as their writers typed them: a title over a line of `=`
as long as itself, a `.. note::` whose body is indented under it, metadata as a field list (`:Answer: …`,
its continuation lines indented, `:Reviewed: 2024-11-18`). The sentence split reads the underline as
words of the next sentence, cuts a field list's leading colon off and runs a directive's last body line,
or the last field's value, into the host's sentence glued on after it. Each is one writer's unit
(`markup.records`): a title leads the text under it in (`markup.lead_in`), as a Markdown heading does; a
directive's last body line and a field list's last line run to their first sentence end
(`layout.last_line_end`), or, where the last field's value opens with a date, a number or a version (what
docutils' bibliographic fields such as `:Date:` and `:Version:` hold), to the end of that token.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import last_line_end, line_end, line_start

# An underline: one punctuation mark, three times or more, alone on its line, under a line whose last
# characters (as many as the underline has, or fewer) are the title
_UNDERLINE = re.compile(r"\n([=\-~^\"'`#*+:.])\1{2,}[ \t]*(?=\n|$)")
_TITLE_START = re.compile(r"[A-Z0-9\"'\u201c(]")
_DIRECTIVE = re.compile(r"(?<!\S)\.\.[ \t]+[a-z][\w-]*::[^\n]*\n")
_BODY_LINE = re.compile(r"(?:[ \t]*\n)*([ \t]+)\S[^\n]*")
_FIELD = re.compile(r"(?<!\S):[A-Za-z][\w -]{0,30}:[ \t]+")
_FIELD_LINE = re.compile(r"\n:[A-Za-z][\w -]{0,30}:[ \t]+")
_INDENTED = re.compile(r"\n[ \t]+\S")
_TOKEN_VALUE = re.compile(r"v?\d[\d.:/-]*[0-9a-z]?(?=[ \t]+[A-Z])")  # "2024-11-18", "1.4.2", "v3" before a sentence


def units(text: str) -> tuple[tuple[Span, bool], ...]:
    """The titles, directives and field lists of the text, in order, each with whether it is closed: a
    field list whose last value is a date, a number or a version ends at it (the sentence after it is the
    host's, whatever it names); the others' last line is read to where it ends."""
    return tuple(sorted([(span, False) for span in titles(text) + directives(text)] + field_lists(text)))


def titles(text: str) -> list[Span]:
    """The underlined titles: the last characters of a line (no more than the underline has, from a word's
    start, opening with a capital, a digit or a quotation mark) with the underline below them."""
    found: list[Span] = []
    for m in _UNDERLINE.finditer(text):
        start = line_start(text, m.start())
        line = text[start : m.start()].rstrip()
        a = start + max(0, len(line) - len(m.group().strip()))
        while a < start + len(line) and a > start and not text[a - 1].isspace():
            a += 1  # the title starts at a word: move past the word the underline's length cuts
        a += len(text[a : start + len(line)]) - len(text[a : start + len(line)].lstrip())
        if a < start + len(line) and _TITLE_START.match(text, a) and re.search(r"[A-Za-z]", line[a - start :]):
            found.append((a, m.end()))
    return found


def directives(text: str) -> list[Span]:
    """The directives (`.. note::`) with their bodies: the lines indented alike under the directive's line
    (blank lines between them), the last one to its first sentence end (`layout.last_line_end`)."""
    found: list[Span] = []
    for m in _DIRECTIVE.finditer(text):
        line = _BODY_LINE.match(text, m.end())
        if line is None:
            continue
        indent, last = line.group(1), line.start(1)
        while line is not None and line.group(1) == indent:
            last = line.start(1)
            line = _BODY_LINE.match(text, line_end(text, last))
        found.append((m.start(), last_line_end(text, last)))
    return found


def field_lists(text: str) -> list[tuple[Span, bool]]:
    """The field lists of two fields or more: each field `:Name: value` opening a line (the first after a
    host's sentence too), its continuation lines indented; the last line to its first sentence end
    (`layout.last_line_end`), or, closed there, to the end of a date, a number or a version that opens the
    last field's value on its own line."""
    found: list[tuple[Span, bool]] = []
    i = 0
    while (m := _FIELD.search(text, i)) is not None:
        last, fields, value = m.end(), 1, m.end()  # where the last line's text and the last field's value start
        while True:
            if (field := _FIELD_LINE.match(text, line_end(text, last))) is not None:
                last = value = field.end()
                fields += 1
            elif (indented := _INDENTED.match(text, line_end(text, last))) is not None:
                last = indented.end() - 1
            else:
                break
        if fields < 2:
            i = m.end()
            continue
        token = _TOKEN_VALUE.match(text, last) if value == last else None
        found.append(((m.start(), token.end() if token is not None else last_line_end(text, last)), token is not None))
        i = line_end(text, last)
    return found

