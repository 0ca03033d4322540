"""Units that a layout of lines makes, read apart from `markup`'s marks: a unified diff and its hunks, a
screenplay's scene, and a poem's or a song's lines.

A patch to a knowledge base's page (a commit's header, `diff --git`, the `---`/`+++` file lines, then hunks)
is one writer's change, and its hunk headers say how long it is: `@@ -12,3 +12,7 @@` counts three old
lines and seven new ones, each context line (` `) among both, each removed line (`-`) among the old and each
added line (`+`) among the new. The sentence split reads none of it: it runs a sentence over the `+` of the
next line and cuts the commit's header at its full stops. So the diff, from its commit's header or its first
file line to the last line its hunks count, is one closed unit (`markup.closed_units`), wherever it
stands (prose holds no hunk header). Its last line may have the host's next sentence glued on after it; a
diff's lines are as wide as the page's hard wrap, so that line runs to its last sentence end within the
width of the hunk's widest line (`end_within`), as a quoted mail's does.

A poem's or a song's lines (`verses`) end no sentence with a mark and open each with a capital: the split
reads a stanza as one run-on sentence and glues the host's next sentence onto the last line. Three or more
such lines in a row that end on a word, two of them opened by a capitalised common word (`_unmarked`), are
a stanza, and a stanza with the title above it (a short line, a blank line between), or a song's stanzas
under their labels ("[Verse 1]", "[Chorus]"), one unit. Where its last line is wider than the stanza's
other lines, the host's sentence was glued on: the line ends at its first sentence end within the widest
line, else before a capitalised clause opener ("… Big Man According to figures …") or a name that a
lower-case word follows, where no mark precedes it (`_line_cut`).

A screenplay's scene (a scene heading, "INT. CITY LIBRARY - NIGHT", then blocks of a character's name in
capitals, maybe a parenthetical, and the dialogue, a blank line between them) is one unit too (`scenes`),
but not a closed one: its last speech may go on. The split reads a name line as the end of the sentence
before it ("… the sperm? ELSA (quietly) In sperm, …"). A script's text export indents and wraps the
dialogue, so an indented speech's lines are its lines and its last line runs to its last sentence end
within its widest line; a flush-left speech is one line, to its first sentence end, as a chat turn's.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import CLAUSE_OPENERS, CLOSING_MARKS, Span

# a sentence end inside a unit's line; a middle initial's full stop is none ("… Freud, not John B. Watson, …";
# "the U.S." and "A.A. Milne" end one as before)
SENTENCE_END = rf"(?:(?<!\s[A-Z])\.|[!?]){CLOSING_MARKS}(?=\s|$)"
_ENDS = re.compile(SENTENCE_END)
# a line of a unit of lines that the unit's next line follows (bounded: a long line is prose), and the
# unit's last line, which runs to its first sentence end (the host's sentence may be glued on after it)
LINE_ON = r"[^\n]{0,500}\n[ \t]*"
LINE_BREAK = re.compile(r"\r?\n")  # a line break, a CRLF one too (a capture's, an interchange's)
MOST_LINES = 300  # lines of one writer's record, message or block (catalogue, interchange, configs); a longer run is none
LAST_LINE = rf"[^\n]*?(?:{SENTENCE_END}|(?=\n)|$)"
_CASUAL_WORDS = 4  # words of a message or a value with no capital ("oh nice, thank you", "true") that a name may end
# a capitalised word (its first group) after a lower-case word, and whether a lower-case word follows (its
# second): "… thank you Its lantern was …", not "… in The Last Jedi." nor "… The Varnholt one …"
_RAISED_OPENER = re.compile(r"(?<![\w'’-])[a-z][a-z'’-]*[ \t]([A-Z][a-z]*)\b(?=([ \t]+[a-z])?)")
_CITED_END = re.compile(rf"{SENTENCE_END}|[.!?]{CLOSING_MARKS}(?:\[[^\]\n]{{1,12}}\])+(?=\s|$)")  # "….[5]" too
_ENDED = re.compile(rf"(?:{_CITED_END.pattern})[ \t]+$")  # a line's part up to a mark, a sentence end last
_COMMIT = r"commit[ \t]+[0-9a-f]{7,40}[ \t]*\n(?:[A-Z][A-Za-z-]{1,24}:[^\n]{0,200}\n)*(?:[ \t]*\n(?:[ \t]{4}[^\n]{0,200}\n)+)?[ \t]*\n"
_FILES = r"(?:diff[ \t]--git[ \t][^\n]{1,300}\n(?:[a-z][^\n]{0,200}\n){0,3})?---[ \t][^\n]{1,300}\n\+\+\+[ \t][^\n]{1,300}\n"
_DIFF_HEAD = re.compile(rf"(?:{_COMMIT})?{_FILES}(?=@@)")
_HUNK = re.compile(r"@@[ \t]-\d+(?:,(\d+))?[ \t]\+\d+(?:,(\d+))?[ \t]@@[^\n]{0,200}")
_MAX_HUNK_LINES = 400  # a hunk header counting more is read as no diff's
_SCENE = re.compile(r"(?<![^\s.!?])(?:INT|EXT|INT\./EXT|EXT\./INT|I/E)\.[ \t][^\n]{1,80}\n")
_CUE = re.compile(r"[ \t]*[A-Z][A-Z0-9.'\u2019-]*(?:[ \t]+[A-Z][A-Z0-9.'\u2019-]*){0,3}(?:[ \t]+\([A-Z.'\u2019 ]{1,10}\))?[ \t]*\n")
_PAREN = re.compile(r"[ \t]*\([^()\n]{1,60}\)[ \t]*\n")
_BLANK = re.compile(r"(?:[ \t]*\n)+")
_SONG_LABEL = re.compile(r"\[(?:Verse|Chorus|Pre-Chorus|Post-Chorus|Bridge|Hook|Refrain|Intro|Outro)(?:[ \t]\d{1,2})?"
                         r"(?::[^\]\n]{1,40})?\][ \t]*\n", re.IGNORECASE)
# a verse's line: a capital (or a digit, past a stanza's first line) opens it, one to twelve words (two on a
# stanza's first line), no time, field, cell, tag or assignment in it
_VERSE_LINE = re.compile(r"[\"'\u201c\u2018(]?[A-Z][^\n|=<>\t]{0,80}|\d[^\n|=<>\t:]{0,80}")
_VERSE_WORDS = (1, 12)  # a stanza's first line has two at least
_SONG_LINE = 200  # characters of a line under a song's label (a chorus may sing a long question)
_RAISED = 2  # lines of a stanza that open with a capitalised common word (`_unmarked`)
_RAISED_WORD = re.compile(r"[A-Z][a-z]+,?[ \t]+[a-z]")
_BARE_SHARE = 2 / 3  # share of a stanza's lines (but its last) that end on a word
_STANZA = 3  # lines a stanza needs to be read as one without a song's label above it
_TITLE_WORDS = 8


def line_start(text: str, i: int) -> int:
    """Where the line that holds `i` starts: after its line break, or at the text's start."""
    return text.rfind("\n", 0, i) + 1


def line_end(text: str, i: int) -> int:
    """Where the line that holds `i` ends: at its line break, or at the text's end."""
    stop = text.find("\n", i)
    return len(text) if stop < 0 else stop


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


def last_line_end(text: str, i: int) -> int:
    """Where a unit whose last line starts at `i` ends: at the line's first sentence end (`first_end`), else
    at the line's end. The host's sentence the planting glued on after the unit's last line stays out, and
    the cohesion reading (`traceback.cohesion`) takes a claim sentence after it that goes on with it: a
    wrapped block's width cannot tell a short host sentence from the block's own."""
    return first_end(text, i, line_end(text, i))


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
        stop = line_end(text, line_start)
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
        stop = line_end(text, start)
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


def verses(text: str) -> tuple[Span, ...]:
    """The songs (their labelled stanzas, one after another, a blank line between) and poems (stanzas of
    `_STANZA` lines or more, with the title line above them) of the text, each to its last line's end
    (`_verse_end`). Read once per text by its one caller, `markup._records`, which is cached."""
    out: list[Span] = []
    for label in _SONG_LABEL.finditer(text):
        if not (out and label.start() < out[-1][1]) and (lines := _stanzas(text, label.start(), labelled=True)):
            out.append((label.start(), _verse_end(text, lines)))
    i = 0
    while i < len(text):
        lines = _stanzas(text, i, labelled=False)
        if lines and not any(u < lines[-1][1] and lines[0][0] < v for u, v in out):
            out.append((_title(text, lines[0][0]) or lines[0][0], _verse_end(text, lines)))
            i = lines[-1][1]
        i = (text.find("\n", i) + 1) or len(text)
    return tuple(sorted(out))


def _stanzas(text: str, i: int, *, labelled: bool) -> list[Span]:
    """The lines of the stanzas from `i` on, a blank line between two: each under a song's label where
    `labelled` (any line of `_SONG_LINE` characters at most goes under a label), else each of `_STANZA`
    verse lines or more that end as a verse's do (`_unmarked`)."""
    out: list[Span] = []
    while True:
        label = _SONG_LABEL.match(text, i) if labelled else None
        if labelled and label is None:
            break
        lines = _stanza(text, label.end() if label else i, 1 if labelled else _STANZA, loose=labelled)
        if not lines or not (labelled or _unmarked(text, lines)):
            break
        out += lines
        if (gap := _BLANK.match(text, lines[-1][1])) is None or not text.startswith("\n", lines[-1][1]):
            break
        i = gap.end()
    return out


def _stanza(text: str, i: int, least: int, *, loose: bool) -> list[Span]:
    """The verse lines from `i` on, one after another, each from its first character to its line's end;
    none where fewer than `least` are there. A line that is one whole (`_verse_line`) goes on the stanza;
    a longer one only ends it, where its cut (`_line_cut`) is a verse line: the host's sentence glued on."""
    lines: list[Span] = []
    while i < len(text):
        stop = line_end(text, i)
        start = i + len(text[i:stop]) - len(text[i:stop].lstrip())
        if _verse_line(text[start:stop], first=not lines, loose=loose):
            lines.append((start, stop))
            if not loose and len(text[start:stop].split()) < 2:
                break  # a one-word line ends a stanza (the last words of a sentence broken into lines)
            i = stop + 1
            continue
        widest = max(v - u for u, v in lines) if lines else 0
        if lines and _verse_line(text[start : _line_cut(text, start, stop, widest)], first=False, loose=loose):
            lines.append((start, stop))
        break
    return lines if len(lines) >= least else []


def _verse_line(line: str, *, first: bool, loose: bool) -> bool:
    """A line of `_VERSE_WORDS` words that a capital opens (a digit too, and one word, past a stanza's first
    line), with no field's colon after its first word and no cell, tag, tab or assignment (`_VERSE_LINE`);
    under a song's label (`loose`), any line of `_SONG_LINE` characters at most."""
    words = line.split()
    if loose:
        return 0 < len(line) <= _SONG_LINE and bool(words)
    return (_VERSE_LINE.fullmatch(line) is not None and _VERSE_WORDS[0] <= len(words) <= _VERSE_WORDS[1]
            and not words[0].endswith(":") and not (first and (line[0].isdigit() or len(words) < 2)))


def _unmarked(text: str, lines: list[Span]) -> bool:
    """The lines break as a verse's do: no full stop closes one but the last, `_BARE_SHARE` of them end on
    a word, no mark at all (a letter's "Hi all,", "Best," lines and its body's sentences do not), and
    `_RAISED` of them, after a line that ends on a letter, open with a capitalised word that a lower-case
    one follows ("… a total\nOf 24 episodes", "… his breathtaking\nVoice graced"), as only a verse writes
    it: prose hard-wrapped at a width goes on in lower case after such a line end, or with a name ("… world
    of\nLos Angeles", "… actor\nDavid Hayter") or a page's header ("Page 2 of 8")."""
    ends = [text[b - 1] for _, b in lines[:-1]]
    raised = sum(e.isalpha() and _RAISED_WORD.match(text, a) is not None for e, (a, _) in zip(ends, lines[1:]))
    return raised >= min(_RAISED, len(ends)) and not any(e in ".!" for e in ends) and sum(e.isalnum() for e in ends) >= _BARE_SHARE * len(ends)


def _verse_end(text: str, lines: list[Span]) -> int:
    """Where a stanza's last line ends: at its line's end where it is no wider than the widest of the lines
    above it, else at its cut (`_line_cut`)."""
    a, b = lines[-1]
    widest = max((v - u for u, v in lines[:-1]), default=b - a)
    return b if b - a <= widest else _line_cut(text, a, b, widest)


def _line_cut(text: str, a: int, b: int, widest: int) -> int:
    """Where a verse line that runs on ends: at its first sentence end where that is within `widest`
    characters (the stanza's widest line), else before the first sentence opener within them
    (`opener_cut`), else at that sentence end."""
    end = first_end(text, a, b)
    if end - a <= widest:
        return end
    cut = opener_cut(text, a, end, widest + 1)
    return end if cut is None else cut


def opener_cut(text: str, a: int, b: int, most: int) -> int | None:
    """Where the first capitalised word of `text[a:b]` past its first, within `most` characters of `a`,
    that follows no mark and opens a sentence starts (the end of the text before it): a clause opener
    (`CLAUSE_OPENERS`: "… Big Man According to …") or a name that a lower-case word follows ("… Of Rome
    Aeneas descended …"), maybe behind an opening quotation mark; None where there is none. The planting
    glues the host's next sentence onto a line that ends on a word."""
    for word in re.finditer(r"(?<=[ \t])[\"\u201c]?([A-Z][a-z]*)\b(,?)(?=[ \t]+([a-z])?)", text[a:b]):
        if word.start() > most:
            break
        before = text[a : a + word.start()].rstrip()
        opens = word.group(1).lower() in CLAUSE_OPENERS or (word.group(3) and not word.group(2))
        if opens and before[-1:] not in ".!?,;:\"\u201d')":
            return a + len(before)
    return None


def value_end(text: str, i: int) -> int:
    """Where a value that starts at `i` and is no sentence (a ticket's labels, a MARC field's data, a Jira
    status line's words) ends: before the first word within its line's first sentence that opens the host's
    sentence glued on (`opener_cut`), else at that first sentence end (`first_end`)."""
    end = first_end(text, i, line_end(text, i))
    cut = opener_cut(text, i, end, end - i)
    return end if cut is None else cut


def raised_opener_cut(text: str, a: int, b: int, *, casual: bool = False) -> int | None:
    """Where the first clause opener (`CLAUSE_OPENERS`) of `text[a:b]` capitalised between two lower-case
    words starts (the end of the text before it, the space left out), or, where `casual`, any capitalised
    word after a lower-case one that ends a reply of at most `_CASUAL_WORDS` words with no capital (a name
    that opens the host's sentence: "oh nice, thank you Rowan said …", "true Rowan said …"); None where
    there is none. Stricter than `opener_cut` (a lower-case word on either side of an opener: a title's "in
    The Last Jedi" is none; prose opens with a capital, so its names are no casual reply's), so it may read
    a line of prose: the planting glues the host's next sentence onto a message or a value that ends without
    a full stop ("oh nice, thank you Its lantern …")."""
    for m in _RAISED_OPENER.finditer(text, a, b):
        before = text[a : m.start(1)]
        if (m.group(1).lower() in CLAUSE_OPENERS and m.group(2)) or (
                casual and len(before.split()) <= _CASUAL_WORDS and before.lower() == before):
            return m.start(1) - 1
    return None


def _title(text: str, i: int) -> int | None:
    """Where the title of the stanza that starts at `i` starts: the line above it (`line_above`) of one to
    `_TITLE_WORDS` words with no sentence end; None where there is none."""
    piece = line_above(text, i, _TITLE_WORDS)
    return piece[0] if piece is not None and _ENDS.search(text, *piece) is None else None


def line_above(text: str, i: int, most: int) -> Span | None:
    """The last sentence of the line above the blank line right before `i` (its part after the line's last
    sentence end but its own, a citation mark after it too: the planting glues a block's first line onto
    the host's last sentence), when it has one to `most` words: a poem's title, a mail reply's own line
    above the client's attribution line. None where no blank line stands right before `i`."""
    gap = re.search(r"\n[ \t]*\n[ \t]*\Z", text[max(0, i - 40) : i])
    if gap is None:
        return None
    stop = i - len(gap.group())
    start = own_start(text, line_start(text, stop), stop)
    return (start, stop) if 1 <= len(text[start:stop].split()) <= most else None


def own_start(text: str, a: int, b: int) -> int:
    """Where the part of `text[a:b]` (a line, or a line up to a mark) that is its own starts: after the last
    sentence end in it (a citation mark after it too) but its own last one, past the spaces after that end.
    The planting glues a block's first line onto the host's last sentence ("… Blue Hawaii. Skip to main
    content"); the line's own closing mark is not the host's."""
    own_end = a + len(text[a:b].rstrip())
    ends = [m.end() for m in _CITED_END.finditer(text, a, b) if m.end() < own_end]
    start = ends[-1] if ends else a
    return start + len(text[start:b]) - len(text[start:b].lstrip())


def after_sentence(text: str, i: int) -> bool:
    """Whether what stands at `i` opens its own line: at the line's start, or after a sentence end (a
    citation mark after it too) and a space, where the planting glues a block's first line onto the host's
    last sentence ("….\u201d.[5] ;;; faq-data.el"); a mark right after a word is the host's ("hit #22")."""
    before = text[line_start(text, i) : i]
    return not before.strip() or _ENDED.search(before) is not None
