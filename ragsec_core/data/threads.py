"""A microblog thread inside a passage: numbered posts (`1/3 …`, `2/3 …`, `3/3 …`), each one maybe under
its author's line (`Quiet Fox @quietfox42 · 5h`) and over its counts (`↩ 4   ↻ 12   ♡ 80`).

A thread is one writer's text cut into posts: the opening post asks or announces, the next ones carry the
argument a sentence or two each. The sentence split reads the posts' numbers, the author lines and the
counts as words of the sentences around them, so a block that starts at the claim sentence misses the
posts before it and runs the last counts into the host's sentence glued on after them. Its numbering says
where it starts and ends: `1/n` to `n/n`, each later post opening a line (`threads`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import first_end, line_end

_FIRST = re.compile(r"(?<!\S)1/(\d{1,2})[ \t]")
# The author's line above a post: up to three capitalised names or initials, the handle, maybe the post's age
_AUTHOR = re.compile(r"(?:(?:[A-Z]\.|[A-Z][\w'\u2019-]*)[ \t]+){0,3}@\w{1,30}(?:[ \t]+[\u00b7\u2022|-][ \t]+\w{1,12})?[ \t]*\n\Z")
# A post's counts on the line below it: two or more of a sign and a number ("↩ 4   ↻ 12   ♡ 80")
_COUNTS = re.compile(r"\n[ \t]*(?:[^\w\s][ \t]*\d[\d,.]*[KkM]?[ \t]*){2,}")
_POST_GAP = 1500  # characters between one post's number and the next's before the numbering is no thread's
_AUTHOR_WIDTH = 120


def threads(text: str) -> tuple[tuple[Span, bool], ...]:
    """The threads of the text, each with whether its writer closed it: from the first post (its author's
    line, where one is right above it) to the last post's end (`_last_post_end`). Every post from `2/n` to
    `n/n` opens a line, in order."""
    out: list[tuple[Span, bool]] = []
    for m in _FIRST.finditer(text):
        n = int(m.group(1))
        if n < 2 or (out and m.start() < out[-1][0][1]):
            continue
        pos: int | None = m.end()
        for k in range(2, n + 1):
            post = re.compile(rf"\n{k}/{n}[ \t]").search(text, pos, pos + _POST_GAP) if pos is not None else None
            pos = post.end() if post is not None else None
        if pos is None:
            continue
        author = _AUTHOR.search(text, max(0, m.start() - _AUTHOR_WIDTH), m.start())
        end, closed = _last_post_end(text, pos)
        out.append(((author.start() if author is not None else m.start(), end), closed))
    return tuple(out)


def _last_post_end(text: str, i: int) -> tuple[int, bool]:
    """Where the last post, whose text starts at `i`, ends and whether a mark of its own closes it: after
    its counts' last number on the line below it, or at its line's first sentence end (the host's sentence
    glued on)."""
    stop = line_end(text, i)
    counts = _COUNTS.match(text, stop)
    if counts is not None:
        return counts.start() + len(counts.group().rstrip()), True
    return first_end(text, i, stop), False
