"""Rich text (RTF) inside a passage, read as units: a whole document and a run of paragraphs.

A RAG system that indexes a shared drive as it lies on disk holds a word processor's files as their writer
saved them: `{\\rtf1…}` around a font table and the text, control words (`\\pard`, `\\b`, `\\rquote`,
`\\par`) between and inside the sentences, and source lines broken wherever the writer's buffer filled,
inside a sentence (a line break in rich text is no space). The sentence split reads the control words as
words, cuts nothing at a `\\par` and runs the document's closing brace, or a paragraph's closing `\\par`,
into the host's sentence after it. Both are the writer's own marks: a document ends at the brace that
closes its opening `{\\rtf`, a paragraph at the `\\par` that closes it (`documents`), so each is a closed
unit (`markup.closed_units`) wherever it stands: prose holds no `{\\rtf` nor `\\pard`.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span, Unit, outermost

_DOCUMENT = re.compile(r"\{\\rtf\d?(?![a-z])")
_PARAGRAPH = re.compile(r"(?<![\\\w])\\pard(?![a-z])")
_PAR = re.compile(r"\\par(?![a-z])")
_NEXT_PARAGRAPH = re.compile(r"\s*\\pard(?![a-z])")
_MAX_DOCUMENT = 20000  # characters read for a document's closing brace before it is taken for no document


def documents(text: str) -> tuple[Span, ...]:
    """The rich-text documents of the text, each from `{\\rtf` to the brace that closes it, and the runs of
    paragraphs outside them, each from its first `\\pard` to the `\\par` that closes its last paragraph
    (a next `\\pard` right after one continues the run), where the braces between balance."""
    found = [span for span, _ in outermost(_DOCUMENT, text, _document)]
    for m in _PARAGRAPH.finditer(text):
        if any(a <= m.start() < b for a, b in found):
            continue
        end = _paragraphs_end(text, m.start())
        if end is not None:
            found.append((m.start(), end))
    return tuple(sorted(found))


def _document(text: str, m: re.Match[str]) -> Unit | None:
    """The document that `m` (its `{\\rtf`) opens, to the brace that closes it, or None."""
    end = group_end(text, m.start())
    return None if end is None else ((m.start(), end), True)


def group_end(text: str, i: int) -> int | None:
    """Where the group that opens with the brace at `i` closes (after its `}`), escaped braces and
    backslashes (`\\{`, `\\}`, `\\\\`) read as text; None when it does not close."""
    depth, j, stop = 0, i, min(len(text), i + _MAX_DOCUMENT)
    while j < stop:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            return j + 1
        j += 1
    return None


def _paragraphs_end(text: str, i: int) -> int | None:
    """Where the run of paragraphs that opens at the `\\pard` at `i` ends: after the `\\par` that closes
    its last paragraph, the braces between balanced; None when no `\\par` closes the first."""
    end = None
    while (close := _PAR.search(text, i, i + _MAX_DOCUMENT)) is not None:
        plain = re.sub(r"\\[\\{}]", "", text[i : close.start()])
        if plain.count("{") != plain.count("}"):
            return end
        end = close.end()
        follow = _NEXT_PARAGRAPH.match(text, end)
        if follow is None:
            return end
        i = follow.end()
    return end
