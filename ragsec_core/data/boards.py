"""A forum post's BBCode, read as one unit.

A RAG system over a bulletin board's archive holds posts as their authors typed them: BBCode's bracketed
tags around and between the sentences (`[quote="Ola Brandt"]…[/quote]`, `[b]…[/b]`, `[list]` and its
`[*]` items, `[url=…]…[/url]`, `[size=85][i]…[/i][/size]`). The sentence split reads none of it: it cuts
a quoted question from the reply under it, an item from the next, and runs a post's last tag into the
host's sentence that the planting glued on. So the tags of a post, one after another with no more than
one blank line between any two, are one closed unit from the first tag to the last, where two of them at
least open and close one element and the last one closes.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span

_NAMES = r"b|i|u|s|quote|list|\*|url|size|color|code|img|center|spoiler|email|sup|sub|font|left|right|hr"
_TAG = re.compile(rf"\[(/?)({_NAMES})(?:=[^\]\n]{{1,200}})?\]", re.IGNORECASE)
_GAP_LINES, _GAP_CHARS = 3, 4000  # line breaks and characters between two tags of one post, at most
_BLANK_LINES = re.compile(r"\n[ \t]*\n[ \t]*\n")  # two blank lines in a row: the post has ended


def posts(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's BBCode posts, each closed: from its first tag to its last, which closes an element,
    the tags one after another (`_joined`)."""
    found: list[tuple[Span, bool]] = []
    run: list[re.Match[str]] = []
    for tag in _TAG.finditer(text):
        if run and not _joined(text[run[-1].end() : tag.start()]):
            found += _post(run)
            run = []
        run.append(tag)
    return tuple(found + _post(run))


def _post(run: list[re.Match[str]]) -> list[tuple[Span, bool]]:
    """The run's post, from its first tag to its last closing one, where some element opens and closes in it."""
    opened = {tag.group(2).lower() for tag in run if not tag.group(1)}
    closes = [tag for tag in run if tag.group(1) and tag.group(2).lower() in opened]
    if not closes:
        return []
    return [((run[0].start(), closes[-1].end()), True)]


def _joined(gap: str) -> bool:
    """Whether two tags with `gap` between them are one post's: a few lines apart, no two blank lines between."""
    return gap.count("\n") <= _GAP_LINES and len(gap) <= _GAP_CHARS and not _BLANK_LINES.search(gap)
