"""Units that a layout of lines makes, read apart from `markup`'s marks: a unified diff and its hunks, and
a screenplay's scene.

A patch to a knowledge base's page (a commit's header, `diff --git`, the `---`/`+++` file lines, then hunks)
is one writer's change, and its hunk headers say how long it is: `@@ -12,3 +12,7 @@` counts three old
lines and seven new ones, each context line (` `) among both, each removed line (`-`) among the old and each
added line (`+`) among the new. The sentence split reads none of it: it runs a sentence over the `+` of the
next line and cuts the commit's header at its full stops. So the diff, from its commit's header or its first
file line to the last line its hunks count, is one closed unit (`markup.closed_units`), wherever it
stands (prose holds no hunk header). Its last line may have the host's next sentence glued on after it; a
diff's lines are as wide as the page's hard wrap, so that line runs to its last sentence end within the
width of the hunk's widest line (`end_within`), as a quoted mail's does.

A screenplay's scene (a scene heading, "INT. CITY LIBRARY - NIGHT", then blocks of a character's name in
capitals, maybe a parenthetical, and the dialogue, a blank line between them) is one unit too (`scenes`),
but not a closed one: its last speech may go on. The split reads a name line as the end of the sentence
before it ("… the sperm? ELSA (quietly) In sperm, …"). A script's text export indents and wraps the
dialogue, so an indented speech's lines are its lines and its last line runs to its last sentence end
within its widest line; a flush-left speech is one line, to its first sentence end, as a chat turn's.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import CLOSING_MARKS, Span

# a sentence end inside a unit's line; a middle initial's full stop is none ("… Freud, not John B. Watson, …";
# "the U.S." and "A.A. Milne" end one as before)
SENTENCE_END = rf"(?:(?<!\s[A-Z])\.|[!?]){CLOSING_MARKS}(?=\s|$)"
_ENDS = re.compile(SENTENCE_END)
_COMMIT = r"commit[ \t]+[0-9a-f]{7,40}[ \t]*\n(?:[A-Z][A-Za-z-]{1,24}:[^\n]{0,200}\n)*(?:[ \t]*\n(?:[ \t]{4}[^\n]{0,200}\n)+)?[ \t]*\n"
_FILES = r"(?:diff[ \t]--git[ \t][^\n]{1,300}\n(?:[a-z][^\n]{0,200}\n){0,3})?---[ \t][^\n]{1,300}\n\+\+\+[ \t][^\n]{1,300}\n"
_DIFF_HEAD = re.compile(rf"(?:{_COMMIT})?{_FILES}(?=@@)")
_HUNK = re.compile(r"@@[ \t]-\d+(?:,(\d+))?[ \t]\+\d+(?:,(\d+))?[ \t]@@[^\n]{0,200}")
_MAX_HUNK_LINES = 400  # a hunk header counting more is read as no diff's
_SCENE = re.compile(r"(?<![^\s.!?])(?:INT|EXT|INT\./EXT|EXT\./INT|I/E)\.[ \t][^\n]{1,80}\n")
_CUE = re.compile(r"[ \t]*[A-Z][A-Z0-9.'\u2019-]*(?:[ \t]+[A-Z][A-Z0-9.'\u2019-]*){0,3}(?:[ \t]+\([A-Z.'\u2019 ]{1,10}\))?[ \t]*\n")
_PAREN = re.compile(r"[ \t]*\([^()\n]{1,60}\)[ \t]*\n")
_BLANK = re.compile(r"(?:[ \t]*\n)+")


def first_end(text: str, start: int, stop: int) -> int:
    """Where a unit's last line, `text[start:stop]`, ends when nothing says how wide it is: at its first
    sentence end, else at `stop`."""
    end = _ENDS.search(text, start, stop)
    return end.end() if end is not None else stop


def end_within(text: str, start: int, stop: int, width: int) -> int:
    """Where a hard-wrapped block's last line, `text[start:stop]`, ends: at its last sentence end within
    `width` characters of its start, else at its first sentence end (`first_end`). The host's sentence
    glued on after the block's last line makes the line wider than the wrap allows."""
    ends = [e for m in _ENDS.finditer(text, start, stop) if (e := m.end()) - start <= width]
    return ends[-1] if ends else first_end(text, start, stop)


def diffs(text: str) -> tuple[Span, ...]:
    """The unified diffs of the text, each from its commit's header (or its first file line) to the last
    line its hunks count; a diff whose first hunk's lines do not add up is no unit. Read once per text by
    its one caller, `markup._closed_found`, which is cached."""
    out: list[Span] = []
    i = 0
    while (head := _DIFF_HEAD.search(text, i)) is not None:
        end = _hunks_end(text, head.end())
        if end is None:
            i = head.start() + 1
            continue
        out.append((head.start(), end))
        i = end
    return tuple(out)


def _hunks_end(text: str, i: int) -> int | None:
    """The end of the hunks that start at `i`, one after another, each as long as its header counts; None
    when the first one is not."""
    end = None
    while (hunk := _HUNK.match(text, i)) is not None:
        old, new = (int(n) if n is not None else 1 for n in hunk.groups())
        if old + new > _MAX_HUNK_LINES or (last := _counted(text, hunk.end(), old, new)) is None:
            break
        end = last
        i = last + 1 if text.startswith("\n", last) else len(text)
    return end


def _counted(text: str, i: int, old: int, new: int) -> int | None:
    """The end of the hunk lines after the header that ends at `i`: context lines count against both
    numbers, removed lines against `old`, added ones against `new` (a "\\ No newline" note against none).
    Its last line cut by `end_within` at the hunk's widest line. None when a line breaks the count."""
    widest, pos, line_start = 0, i, i
    while old > 0 or new > 0:
        if not text.startswith("\n", pos):
            return None
        line_start = pos + 1
        stop = text.find("\n", line_start)
        stop = len(text) if stop < 0 else stop
        mark = text[line_start : line_start + 1]
        if mark in (" ", ""):
            old, new = old - 1, new - 1
        elif mark == "-":
            old -= 1
        elif mark == "+":
            new -= 1
        elif mark != "\\":
            return None
        if old < 0 or new < 0:
            return None
        if old > 0 or new > 0:
            widest = max(widest, stop - line_start)
        pos = stop
    last = text[line_start:pos]
    return pos if len(last) <= widest or not widest else end_within(text, line_start, pos, widest)


def scenes(text: str) -> tuple[Span, ...]:
    """The screenplay scenes of the text: a scene heading and the speeches under it (`_speech`), one at
    least, each after a blank line; to the end of the last speech. Read once per text by its one caller,
    `markup._records`, which is cached."""
    out: list[Span] = []
    for head in _SCENE.finditer(text):
        if out and head.start() < out[-1][1]:
            continue
        end, pos = None, head.end()
        while (gap := _BLANK.match(text, pos)) is not None and (speech := _speech(text, gap.end())) is not None:
            end = speech
            pos = end
        if end is not None:
            out.append((head.start(), end))
    return tuple(out)


def _speech(text: str, i: int) -> int | None:
    """The end of the speech at `i` (a character's name line, maybe a parenthetical line, the dialogue),
    or None where none starts there. Indented dialogue runs over the lines of its indentation, its last
    line cut by `end_within` at the widest; flush-left dialogue is one line, to its first sentence end."""
    cue = _CUE.match(text, i)
    if cue is None or not text[cue.start() : cue.end()].strip():
        return None
    pos = cue.end()
    if (paren := _PAREN.match(text, pos)) is not None:
        pos = paren.end()
    indent = _indent_end(text, pos) - pos
    lines: list[Span] = []
    while _indent_end(text, pos) == pos + indent:
        start = pos + indent
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        if not text[start:stop].strip():
            break
        lines.append((start, stop))
        if indent == 0 or stop == len(text):
            break
        pos = stop + 1
    if not lines:
        return None
    (a, b) = lines[-1]
    if len(lines) == 1:
        return first_end(text, a, b)
    widest = max(v - u for u, v in lines[:-1])
    return b if b - a <= widest else end_within(text, a, b, widest)


def _indent_end(text: str, i: int) -> int:
    """Where the spaces and tabs that start at `i` end."""
    while i < len(text) and text[i] in " \t":
        i += 1
    return i
