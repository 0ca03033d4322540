"""Commits as `git log` prints them, read as units: the hash line, the header's fields, the message indented
four spaces, and what closes it, a trailer or the commit's diffstat.

A RAG system that answers questions from a repository's history holds commits as git prints them: `commit`
and the hash, `Author:` and `Date:` (and more fields in other formats), a blank line, then every line of the
message indented four spaces (a blank one too), maybe a trailer last (`Signed-off-by: Name <mail>`), and
under `--stat` a blank line and the changed files with their counts (` path | 4 ++--`, ` 1 file changed,
…`). The sentence split reads the hash line and the header as words of the host's sentence before them and
runs the message's last line into the host's next sentence. So a commit is one unit from its hash line: it
closes at its diffstat's summary or at its last line's trailer; without either its last line runs to its
first sentence end (`layout.last_line_end`). A commit whose message a patch follows is the diff's
(`layout.diffs`), which counts its own lines.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import diffs, last_line_end, line_end

HASH_LINE = r"commit[ \t]+[0-9a-f]{7,40}(?:[ \t]+\([^()\n]{1,200}\))?[ \t]*\n"  # `git log`'s line (refs in brackets)
_HEAD = re.compile(rf"(?<!\S){HASH_LINE}"
                   r"(?:[A-Z][A-Za-z]{1,24}:[^\n]{0,200}\n){1,6}[ \t]*\n")
_MESSAGE_LINE = re.compile(r"[ ]{4}")
_TRAILER = re.compile(r"[ ]{4}[A-Z][A-Za-z]*(?:-[A-Za-z]+)*:[ \t][^\n<>]{1,80}<[^<>\s]{1,80}>")
_STAT = re.compile(r"\n(?:[ ][^\n|]{1,300}\|[ \t]+\d+[ \t]*[+-]*[ \t]*\n){1,200}"
                   r"[ ]\d+[ ]files?[ ]changed(?:,[ ]\d+[ ]insertions?\(\+\))?(?:,[ ]\d+[ ]deletions?\(-\))?")


def commits(text: str) -> tuple[tuple[Span, bool], ...]:
    """The commits of the text, each with whether it is closed: from the hash line over the header and the
    message's indented lines to the diffstat's summary or the last line's trailer (closed), else to its
    last line's first sentence end (open). A commit that opens a diff is left to `layout.diffs`."""
    found: list[tuple[Span, bool]] = []
    patched: set[int] | None = None  # where the text's diffs start, read only once a hash line is found
    for m in _HEAD.finditer(text):
        patched = {a for a, _ in diffs(text)} if patched is None else patched
        if m.start() in patched:
            continue
        last, i = None, m.end()
        while _MESSAGE_LINE.match(text, i) is not None:
            last, i = i, line_end(text, i) + 1
        if last is None:
            continue
        stat = _STAT.match(text, i) if i <= len(text) and text[i - 1 : i] == "\n" else None
        trailer = _TRAILER.match(text, last)
        if stat is not None:
            found.append(((m.start(), stat.end()), True))
        elif trailer is not None:
            found.append(((m.start(), trailer.end()), True))
        else:
            found.append(((m.start(), last_line_end(text, last)), False))
    return tuple(found)
