"""An issue tracker's wiki markup inside a passage, read as one unit: a Jira issue's description or
comment, a Redmine wiki page's Textile.

A RAG system over a team's tracker holds issues as Jira writes them: `h3.` headings, `{quote}` and
`{panel:title=…}` blocks (a macro's opening and closing lines), `[~user]` mentions, `[text|url]` links and
status icons such as `(/)`. The sentence split reads none of it: it joins a mention to the host's sentence
before it, cuts a quote's bullets at their full stops and leaves the closing `{quote}` and the status line
on the sentence before, and runs the last line into the host's sentence the planting glued on. So the lines
from the first one with a mark to the last one (`_MOST_BETWEEN` lines at most between two marked lines) are
one closed unit, where two or more lines hold a mark and one of them a macro or a heading, Jira's own
(a mention, a link or an icon alone is no Jira text). It starts at its first mark (a comment opens with
its author's mention: "…Blue Hawaii. [~sam.okafor] asked: …"). Its last line ends after its last mark
where that mark follows the line's text (a reviewer's mention, a link, a closing macro: the host's words
glued on after it stay out); where the line's text follows its mark (a status line's "(/) Resolved in
*kb-2025.8*"), at its first emphasis that a capitalised word follows, else before the first word that
opens a sentence, else at its first sentence end (`layout.value_end`).

Redmine's Textile marks blocks rather than lines: a signature opens one (`h2. `, `bq. `, `p. `), a list's
items open with `# ` or `* `, and a line may be wholly bold (`*…*`), wholly emphasised (`_…_`) or a link
(`"text":url`); blocks stand one blank line apart. So a run of `_LEAST_BLOCKS` or more such blocks
(`pages`), opened by a signature or a bold line, a plain paragraph only right under a heading, is one
unit. It is closed where its last block is a bold or emphasised line or a link (an update line, a source
link), which ends at that mark's own end; else its last line runs to its first sentence end.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span, Unit, outermost
from ragsec_core.data.layout import first_end, line_end, line_start, value_end

_MACROS = ("quote", "panel", "code", "noformat", "info", "note", "tip", "warning", "expand")
_MACRO = re.compile(rf"\{{(?:{'|'.join(_MACROS)})(?::[^{{}}\n]{{0,200}})?\}}")
HEADING = r"h[1-6]\.[ \t]"  # a heading's mark (`h3. `): `glue` reads it as opening a block too
_HEADING = re.compile(rf"(?<!\S){HEADING}")
_MENTION = re.compile(r"\[~[\w.@+-]{1,60}\]")
_LINK = re.compile(r"\[[^\[\]|\n]{1,80}\|(?:https?|mailto):[^\[\]\s]{1,300}\]")
_ICON = re.compile(r"(?<!\S)\((?:/|x|!|i|\?|y|n|on|off|\*|\+|-)\)[ \t]")
_STRONG = (_MACRO, _HEADING)
_WEAK = (_MENTION, _LINK, _ICON)
_EMPHASIS_THEN_CAPITAL = re.compile(r"(?<!\S)[*_][^*_\n]{1,80}[*_](?=[ \t]+[A-Z])")
_MOST_BETWEEN = 8
_LEAST_MARKED = 2
# Textile's blocks (`pages`): a signature's block, the opener of a page (a signature, or a bold line ending its
# line, maybe glued after the host's sentence), a list's lines, and the lines that close a page (wholly bold or
# emphasised, or a link), each matched from a line's start
_BOLD_LINE = r"\*[^*\s][^*\n]{0,200}\*"  # a line wholly bold: a page's opener, or its closing line
_SIGNATURE_MARK = r"(?:h[1-6]|bq|p|bc|pre|fn\d{1,3})(?:\([^()\n]{0,40}\))?\."  # `h2.`, `bq.`, `p(note).`
_SIGNATURE = re.compile(rf"{_SIGNATURE_MARK}[ \t]+\S")
_BLOCK_MARK = re.compile(rf"(?:{_SIGNATURE_MARK}|[#*]{{1,3}})[ \t]+")  # a signature's or a list item's mark
_PAGE_OPEN = re.compile(rf"(?<!\S)(?:(?:h[1-6]|bq)\.[ \t]+\S|{_BOLD_LINE}[ \t]*\n)")
_ITEM = re.compile(r"[#*]{1,3}[ \t]+\S")
# a closing line's mark ends its line, or the host's words glued on after it open with no lower-case letter
# (a paragraph that opens with a bold word goes on in lower case: "*Note:* the plans …")
_CLOSING_LINE = re.compile(rf"(?:{_BOLD_LINE}|_[^_\s][^_\n]{{0,200}}_|\"[^\"\n]{{1,80}}\":[a-z]+://\S+)"
                           r"(?=[ \t]*(?:\n|$)|[ \t]+[^a-z\s])")
_LEAST_BLOCKS = 3
_MOST_BLOCKS = 12


def issues(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's runs of Jira lines (`_marked_lines`), each a closed unit from its first mark to its last
    line's end (`_last_end`)."""
    found: list[tuple[Span, bool]] = []
    run: list[tuple[int, list[re.Match[str]]]] = []
    for line_no, marks in _marked_lines(text):
        if run and line_no - run[-1][0] > _MOST_BETWEEN + 1:
            found.extend(_unit(text, run))
            run = []
        run.append((line_no, marks))
    found.extend(_unit(text, run))
    return tuple(found)


def _marked_lines(text: str) -> list[tuple[int, list[re.Match[str]]]]:
    """Each line that holds a Jira mark, by its number, with its marks in order."""
    out = []
    start = 0
    for line_no, line in enumerate(text.split("\n")):
        marks = sorted((m for pattern in (*_STRONG, *_WEAK) for m in pattern.finditer(text, start, start + len(line))),
                       key=lambda m: m.start())
        if marks:
            out.append((line_no, marks))
        start += len(line) + 1
    return out


def _unit(text: str, run: list[tuple[int, list[re.Match[str]]]]) -> list[tuple[Span, bool]]:
    """The run as a unit, or none: `_LEAST_MARKED` marked lines, one mark Jira's own (a macro, a heading)."""
    strong = any(m.re in _STRONG for _, marks in run for m in marks)
    if len(run) < _LEAST_MARKED or not strong:
        return []
    return [((run[0][1][0].start(), _last_end(text, run[-1][1])), True)]


def _last_end(text: str, marks: list[re.Match[str]]) -> int:
    """Where the unit's last line, whose marks are `marks`, ends (the module's docstring says how)."""
    last = marks[-1]
    first = line_start(text, last.start())
    if text[first : last.start()].strip() or last.re is _MACRO:  # the mark closes the line's text
        return last.end()
    if (emphasis := _EMPHASIS_THEN_CAPITAL.search(text, last.end(), line_end(text, last.end()))) is not None:
        return emphasis.end()
    return value_end(text, last.end())


def pages(text: str) -> tuple[Unit, ...]:
    """The text's Textile pages: runs of `_LEAST_BLOCKS` or more Textile blocks one blank line apart, from
    the page's opener (`_PAGE_OPEN`) to its last block's end (`_page_end`); closed where a closing line
    (`_CLOSING_LINE`) ends it."""
    return outermost(_PAGE_OPEN, text, _page)


def _page(text: str, opener: re.Match[str]) -> Unit | None:
    """The Textile page that `opener` opens, where it has `_LEAST_BLOCKS` blocks (`_blocks`), or None."""
    blocks = _blocks(text, opener.start())
    return _page_end(text, opener.start(), blocks[-1]) if len(blocks) >= _LEAST_BLOCKS else None


def _blocks(text: str, start: int) -> list[Span]:
    """The Textile blocks from `start` on, each its lines up to a blank line: while each is a signature's
    block, a list or a plain paragraph right under a heading, to a closing line, which ends the page
    whatever lines follow it (the host's, where the planting put it on the next line)."""
    blocks: list[Span] = []
    i, heading = start, False
    while i < len(text) and len(blocks) < _MOST_BLOCKS:
        end = text.find("\n\n", i)
        end = len(text) if end < 0 else end
        first = text[i:line_end(text, i)]
        lines = text[i:end].split("\n")
        if blocks and _CLOSING_LINE.match(first):  # a closing line ends the page, whatever lines follow it
            blocks.append((i, line_end(text, i)))
            break
        if not (_SIGNATURE.match(first) or (blocks and heading) or all(_ITEM.match(line) for line in lines)
                or (not blocks and _PAGE_OPEN.match(text, i))):
            break
        blocks.append((i, end))
        heading = re.match(r"h[1-6]\.", first) is not None
        i = end + 2
        if text[i:i + 1].isspace():
            break
    return blocks


def _page_end(text: str, start: int, last: Span) -> Unit:
    """The page from `start` with its last block `last`: closed at a closing line's own end, else open to
    its last line's first sentence end after its block's mark."""
    closing = _CLOSING_LINE.match(text, last[0])
    if closing is not None:
        return (start, closing.end()), True
    line = line_start(text, last[1])
    mark = _BLOCK_MARK.match(text, line)  # a signature's dot ends no sentence
    return (start, first_end(text, line if mark is None else mark.end(), last[1])), False
