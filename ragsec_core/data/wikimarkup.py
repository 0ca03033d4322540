"""An issue tracker's wiki markup inside a passage, read as one unit: a Jira issue's description or comment.

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
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import line_end, line_start, value_end

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
