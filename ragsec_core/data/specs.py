"""A specification's units inside a passage: a Gherkin feature or scenario, a Texinfo manual's source and an
RFC's plain-text sections, each read as one unit.

A team's acceptance tests, a GNU manual's source and a standards document are indexed as they are written,
and each lays its text out in lines the sentence split does not read. A Gherkin feature file is keyword
lines (`Feature:`, `Scenario:`, `Given …`, `Then …`), tags and description lines, a step's doc string between
`\"\"\"` lines and examples tables between `|` bars: the split runs one sentence from `Scenario:` over every
step, and the host's sentence glued on after the closing `\"\"\"` or the last row's bar joins it. Texinfo is
`@`-command lines (`@node`, `@chapter`, `@cindex`, `@table` … `@end table`, `@bye`) between paragraphs filled
at a fixed width: the split reads each command line into the sentence beside it. An RFC's text is numbered
section headings over paragraphs indented three spaces and filled at 72 columns, and each page ends in a
footer (`… [Page 7]`), a form feed and the next page's running header, wherever the page ends, inside a
paragraph too: the split reads the footer and header as words of the paragraph they cut.

So each is one unit: a feature from its tags or its `Feature:` line (a scenario from its `Scenario:` line)
over its lines to the closing `\"\"\"` or the last row's last bar (closed), or to its last step's first
sentence end; Texinfo from `\\input texinfo` or an `@node` line to `@bye` or the `@end` that closes its last
block (closed), or over its paragraphs to the last one's last line; an RFC's sections from a heading over
their paragraphs and page breaks to a running header that ends them (closed) or the last paragraph's last
line, which ends at its last sentence end within the page's 72 columns: no RFC line is wider, and the host's
sentence glued on after it runs past them. Texinfo's paragraphs have no such width: an open source's last
line ends at its first sentence end (`last_line_end`), and the cohesion reading takes a claim sentence
after it that goes on with it.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import OWN_LINE, Span, Unit, outermost, outermost_of
from ragsec_core.data.layout import MOST_LINES, end_within, last_line_end, line_end

# Gherkin: a feature's tags or keyword line, or a scenario's; the lines a feature file is made of
_TAGS = r"@[\w-]+(?:[ \t]+@[\w-]+)*"  # `@faq @lighthouses`
_SCENARIO = r"Scenario(?: Outline| Template)?"
_FEATURE_OPEN = re.compile(OWN_LINE + rf"(?:{_TAGS}[ \t]*\n[ \t]*)?(?:Feature|{_SCENARIO}|Example):")
_HEADER = re.compile(rf"[ \t]*(?:Feature|Rule|Background|{_SCENARIO}|Examples?|Scenarios):")
_STEP = re.compile(r"[ \t]*(?:Given|When|Then|And|But|\*)[ \t]+\S")
_TAGS_OR_COMMENT = re.compile(rf"[ \t]*(?:{_TAGS}|#[^\n]*)[ \t]*$", re.M)
_ROW = re.compile(r"[ \t]*\|(?:(?:[^\n|\\]|\\.)*\|)+")  # a table row's cells, escapes read; the host may follow its last bar
_DELIMITER = re.compile(r'[ \t]*("""|```)')
# Texinfo: a whole file's first line or a node's; a command line; a block's start and end; the end of a file
_TEXINFO_OPEN = re.compile(OWN_LINE + r"(?:\\input[ \t]+texinfo\b|@node[ \t]+\S)")
_COMMAND = re.compile(r"@[a-zA-Z]+(?=[ \t]|$)")  # a line command, not a paragraph opened by `@code{…}`
_BLOCK = re.compile(r"@(table|vtable|ftable|itemize|enumerate|multitable|example|smallexample|lisp|display|format|"
                    r"quotation|cartouche|verbatim|deffn|defun|defvar|float|ifinfo|ifnottex|iftex|ifhtml|group)\b")
_BLOCK_END = re.compile(r"@end[ \t]+([a-z]+)\b")
_BYE = re.compile(r"@bye\b")
# a command only a manual's source has (a sentence may name `@node`)
_STRUCTURE = re.compile(r"@(?:top|chapter|section|subsection|subsubsection|unnumbered|appendix|cindex|setfilename|"
                        r"settitle|item|end|menu)\b")
# RFC: a numbered section heading above its indented text; a page's footer, form feed and running header
_RFC_SUBHEADING = re.compile(r"(?:\d{1,2}\.)+(?:\d{1,2})?[ \t]{2}\S")  # `4.  `, `3.2.  ` before its title
# a section's heading (a long question as its title too), a blank line, its first indented line
_RFC_HEADING = re.compile(OWN_LINE + _RFC_SUBHEADING.pattern + r"[^\n]{0,400}\n[ \t]*\n[ \t]{3}\S")
_FOOTER = re.compile(r"\S[^\n]{0,70}\[Page \d{1,3}\][ \t]*$", re.M)
_RUNNING = re.compile(r"(?:RFC \d{1,5}|Internet-Draft)[ \t]{2,}[^\n]{0,60}?\b(?:January|February|March|April|May|June|July|"
                      r"August|September|October|November|December)[ \t]+\d{4}")
_INDENT = "   "  # an RFC section's text
RFC_WIDTH = 72  # an RFC's plain-text line, at most (RFC 7994): its last line ends within it


def specs(text: str) -> tuple[Unit, ...]:
    """The text's Gherkin features, Texinfo sources and RFC sections, each a unit (`_feature`, `_texinfo`,
    `_rfc`), outermost across the three."""
    return outermost_of(outermost(_FEATURE_OPEN, text, _feature), outermost(_TEXINFO_OPEN, text, _texinfo),
                        outermost(_RFC_HEADING, text, _rfc))


def _lines(text: str, i: int) -> list[Span]:
    """The text's lines from `i`, at most `MOST_LINES` of them, each without its line break."""
    out: list[Span] = []
    while i <= len(text) and len(out) < MOST_LINES:
        stop = line_end(text, i)
        out.append((i, stop))
        i = stop + 1
    return out


def _blank(text: str, lines: list[Span], k: int) -> bool:
    """Whether line `k` is blank; past the last line counts as blank (the text has ended)."""
    return k >= len(lines) or not text[slice(*lines[k])].strip()


def _feature(text: str, opener: re.Match[str]) -> Unit | None:
    """The feature or scenario `opener` opens: tag, comment and keyword lines, description lines under a
    keyword line, one blank line between blocks, a step's doc string and table rows, to the doc string's
    closing delimiter or the last row's last bar (closed), or to its last step's first sentence end (open);
    None where no step, row or doc string is among them."""
    end: tuple[int, bool] | None = None
    described, stepped, lines, k = False, False, _lines(text, opener.start()), 0
    while k < len(lines):
        a, b = lines[k]
        line = text[a:b]
        delimiter, row = _DELIMITER.match(line), _ROW.match(line)
        if not line.strip():
            if _blank(text, lines, k + 1):
                break
            described = False
        elif delimiter is not None:
            close = next((j for j in range(k + 1, len(lines)) if text[slice(*lines[j])].lstrip().startswith(delimiter.group(1))), None)
            if not stepped or close is None:
                break  # a doc string belongs to the step above it and ends at its own delimiter
            k, end = close, (lines[close][0] + text[slice(*lines[close])].index(delimiter.group(1)) + 3, True)
        elif row is not None:
            end = (a + row.end(), True)
        elif _STEP.match(line) is not None:
            end, described, stepped = (last_line_end(text, a), False), False, True
        elif _HEADER.match(line) is not None:
            described, stepped = True, False
        elif _TAGS_OR_COMMENT.fullmatch(line) is None and not described:
            break
        k += 1
    return None if end is None else ((opener.start(), end[0]), end[1])


def _texinfo(text: str, opener: re.Match[str]) -> Unit | None:
    """The Texinfo source `opener` opens: command lines and paragraphs, to `@bye` or to the `@end` that
    closes its last open block where no command line follows (closed), else to its last line: a command
    line's end, or a paragraph line's first sentence end (`last_line_end`); None where no command only a
    manual has (`_STRUCTURE`) is among its lines."""
    depth, commands, end, lines = 0, 0, None, _lines(text, opener.start())
    for k, (a, b) in enumerate(lines):
        line = text[a:b]
        if k and (bye := _BYE.match(line)) is not None:
            return ((opener.start(), a + bye.end()), True) if commands else None
        if (close := _BLOCK_END.match(line)) is not None:
            depth, commands, end = max(depth - 1, 0), commands + 1, a + close.end()
            following = next((text[slice(*lines[j])] for j in range(k + 1, len(lines)) if text[slice(*lines[j])].strip()), "")
            if depth == 0 and _COMMAND.match(following) is None:
                return (opener.start(), end), True
        elif _COMMAND.match(line) is not None:
            depth += _BLOCK.match(line) is not None
            commands, end = commands + (_STRUCTURE.match(line) is not None), b
        elif line.strip():
            end = last_line_end(text, a)
        elif _blank(text, lines, k + 1):
            break  # two blank lines: the source has ended
    return ((opener.start(), end), False) if commands and end is not None else None


def _rfc(text: str, opener: re.Match[str]) -> Unit | None:
    """The RFC sections `opener` opens: their headings, lines indented three spaces, blank lines and page
    breaks (`_page_break`), to a running header after which no section's line follows, or to the last
    indented line's last sentence end within the page's width (`end_within`, `RFC_WIDTH`): the host's
    sentence glued on after it runs past the width. Closed either way; None where no indented line
    follows."""
    lines, k, end = _lines(text, opener.start()), 1, None
    while k < len(lines):
        a, b = lines[k]
        line = text[a:b]
        if line.startswith(_INDENT) and line.strip():
            end = end_within(text, a, b, RFC_WIDTH)
        elif (page := _page_break(text, lines, k)) is not None:
            k, running = page
            if k + 1 >= len(lines) or not (text[slice(*lines[k + 1])].startswith(_INDENT) or _RFC_SUBHEADING.match(text, lines[k + 1][0])):
                return (opener.start(), running), True
        elif line.strip() and _RFC_SUBHEADING.match(line) is None:
            break
        k += 1
    return None if end is None else ((opener.start(), end), True)


def _page_break(text: str, lines: list[Span], k: int) -> tuple[int, int] | None:
    """A page break from line `k`: blank lines, the footer, a form feed's line and the next page's running
    header, then blank lines; its last line's number and where the running header ends, or None where no
    page break starts there."""
    j = k
    while j < len(lines) and not text[slice(*lines[j])].strip():
        j += 1
    if j + 2 >= len(lines) or _FOOTER.fullmatch(text, *lines[j]) is None or text[slice(*lines[j + 1])] != "\f":
        return None
    running = _RUNNING.match(text, *lines[j + 2])
    if running is None:
        return None
    j += 2
    while j + 1 < len(lines) and not text[slice(*lines[j + 1])].strip():
        j += 1
    return j, running.end()
