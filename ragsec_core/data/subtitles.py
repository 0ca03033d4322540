"""A video's styled subtitles inside a passage, read as one unit: an Advanced SubStation Alpha (ASS/SSA)
script, as Aegisub and other subtitle editors write it.

A RAG system over a video library's subtitle tracks holds a script as its editor saved it: sections under
bracketed headers (`[Script Info]`, `[V4+ Styles]`, `[Events]`), each a run of `Name: value` lines
(`Title: …`, `Style: …`, a `Format:` line naming the fields) and `;` comments, then in the events section
one `Dialogue:` line a subtitle, nine comma-separated fields (layer, times, style, speaker, margins,
effect) before its text, which holds override tags in braces (`{\\i1}`) and hard line breaks (`\\N`). The
sentence split reads none of it: it takes the headers and the field lines as words of the host's sentence
glued on before them, and runs the last subtitle's text into the host's next sentence. So a script, from
its first section header over its sections (one blank line between two) to its last line, is one closed
unit; the last line ends at its text's first sentence end (`layout.last_line_end`: a subtitle is a short
line, and the host's sentence glued on after it stays out) or where the host's sentence glued on after a
text with none opens, or a field's value where the host opens its sentence after it (`layout.value_end`).

A web video's captions are a WebVTT file (`captions`): a `WEBVTT` line and its header's lines, then cues
one blank line apart, each an identifier line maybe, a time line (`00:01:02.300 --> 00:01:05.000`, cue
settings after it) and its text, wrapped into caption lines and holding voice and italic tags (`<v Guest>`,
`<i>`). A track's excerpt is its cues alone. The split reads a time line as words of the sentence before it
and runs the last caption line into the host's next sentence. So the file from its `WEBVTT` line, or an
excerpt from its first time line (its identifier above it: a line of its own, or a number after the host's
sentence), over its cues and `NOTE` blocks to its last cue's last line is one closed unit; that line ends at
its first sentence end (`last_line_end`). The last cue's last line is the first of its lines with words
after a sentence end, where the host's sentence was glued on, that a line wider than any caption line by
more than a word follows: the host's own lines after it (a dialogue's) are no captions, though no blank
line parts them.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Unit, outermost
from ragsec_core.data.layout import MOST_LINES, first_end, last_line_end, line_end, line_start, raised_opener_cut, value_end

# the sections an ASS or SSA script holds, under their headers
_SECTIONS = r"(?:Script Info|V4\+? Styles|Events|Fonts|Graphics|Aegisub Project Garbage|Aegisub Extradata)"
_HEADER = re.compile(rf"(?<!\S)\[{_SECTIONS}\][ \t]*\n")
_FIELD = re.compile(r"[A-Za-z][\w ]{0,30}:[ \t]*(?=\S)")  # `Title: …`, `Format: …`, `Dialogue: …`
_EVENT = re.compile(r"(?:Dialogue|Comment):[ \t]*(?:[^,\n]*,){9}")  # a subtitle's line to its text
_LEAST = 2  # field lines a script holds at least (an events section's `Format:` and one `Dialogue:`)

# a WebVTT time stamp (hours optional) and a cue's time line, its settings after it
_VTT_TIME = r"(?:\d{2,}:)?[0-5]\d:[0-5]\d\.\d{3}"
_TIMING = rf"{_VTT_TIME}[ \t]+-->[ \t]+{_VTT_TIME}(?=[ \t\n])"
_TIME_LINE = re.compile(rf"{_TIMING}[^\n]*\n")
_VTT_OPEN = re.compile(rf"(?<!\S)(?:WEBVTT(?=[ \t\n])|{_TIMING}|\d{{1,6}}[ \t]*\n(?={_TIMING}))")  # a numbered cue too
_IDENTIFIER = re.compile(r"(?:(?!-->)[^\n]){1,60}")  # a cue's identifier: a line of its own, no time line's arrow
_SLACK = 12  # characters a caption line may fall short of its track's width (the next word did not fit)
_VTT_BLOCK = re.compile(r"(?:NOTE|STYLE|REGION)(?=[ \t\n])")  # a comment's, a style sheet's or a region's block


def scripts(text: str) -> tuple[Unit, ...]:
    """The text's ASS scripts, each closed: from the first section header to the end of its last line
    (`_script`)."""
    return outermost(_HEADER, text, _script)


def _script(text: str, header: re.Match[str]) -> Unit | None:
    """The script whose first section `header` opens: its sections' field lines and comment lines, a blank
    line only before another section's header, to its last line; None where it holds fewer than `_LEAST`
    field lines."""
    i, fields, last = header.end(), 0, None
    for _ in range(MOST_LINES):
        if i > len(text):
            break
        stop = line_end(text, i)
        line = text[i:stop]
        if (field := _FIELD.match(line)) is not None:
            fields, last = fields + 1, (i, field)
        elif not (line.startswith(";") or _HEADER.match(text, i) or (not line.strip() and _HEADER.match(text, stop + 1))):
            break
        i = stop + 1
    if last is None or fields < _LEAST:
        return None
    return (header.start(), _line_end(text, *last)), True


def _line_end(text: str, start: int, field: re.Match[str]) -> int:
    """Where the script's last line, a field line at `start`, ends: a subtitle's at its text's first
    sentence end (`last_line_end`), or before a clause opener capitalised between two lower-case words where
    its text ends without one ("checked against the minutes Its lantern …": `raised_opener_cut`); another
    field's where the host's sentence glued on after its value opens (`value_end`)."""
    event = _EVENT.match(text, start)
    if event is None:
        return value_end(text, start + field.end())
    end = last_line_end(text, event.end())
    cut = raised_opener_cut(text, event.end(), end)
    return end if cut is None else cut


def captions(text: str) -> tuple[Unit, ...]:
    """The text's WebVTT files and excerpts of cues, each closed: from its `WEBVTT` line or its first time
    line (its identifier's line above it) to its last cue's last line (`_captions`)."""
    return outermost(_VTT_OPEN, text, _captions)


def _captions(text: str, opener: re.Match[str]) -> Unit | None:
    """The captions `opener` opens: the header's lines where it is a `WEBVTT` line, then blocks one blank
    line apart (a cue: an identifier's line maybe, a time line and text lines; a `NOTE`, `STYLE` or
    `REGION` block), to the last cue's last line; None where no cue follows."""
    start, i, last, widest = opener.start(), opener.start(), None, 0
    if opener.group().startswith("WEBVTT"):
        i = _block_end(text, i) + 1
    else:
        above = line_start(text, line_start(text, i) - 1) if line_start(text, i) > 0 else None
        if line_start(text, i) == i and above is not None and _IDENTIFIER.fullmatch(text, above, i - 1):
            start = above
    for _ in range(MOST_LINES):
        while i < len(text) and text[i] == "\n":
            i += 1
        cue = _TIME_LINE.match(text, i) or _TIME_LINE.match(text, line_end(text, i) + 1)
        if cue is not None and (cue.start() == i or _IDENTIFIER.fullmatch(text, i, cue.start() - 1)):
            stop = _block_end(text, cue.end())
            if stop > cue.end():
                if last is not None:
                    widest = max(widest, *(len(line) for line in text[last[0] : last[1]].split("\n")))
                last = (cue.end(), stop)
            i = stop + 1
        elif _VTT_BLOCK.match(text, i):
            i = _block_end(text, i) + 1
        else:
            break
    return None if last is None else ((start, last_line_end(text, _last_caption_line(text, *last, widest))), True)


def _last_caption_line(text: str, i: int, stop: int, widest: int) -> int:
    """Where the last cue's last line starts, its lines running from `i` to `stop` and the caption lines
    before them `widest` characters wide at most: at the first line with a sentence end and more words
    after it (where the host's sentence was glued on) that a line wider than every caption line before it,
    by more than a word (`_SLACK`), follows: the host's own lines (its dialogue's) are no captions, though
    no blank line parts them; a caption line's abbreviation ("the U.S. Therefore") has captions after it.
    Else at the last line."""
    while (end := line_end(text, i)) < stop:
        if text[first_end(text, i, end) : end].strip() and _widest(text, end + 1, stop) > max(widest, end - i) + _SLACK:
            return i
        widest, i = max(widest, end - i), end + 1
    return i


def _widest(text: str, i: int, stop: int) -> int:
    """The widest line's characters from `i` to `stop`, each to its first sentence end (the host's sentence
    glued on after the last line is not the captions')."""
    widths, a = [0], i
    while a < stop:
        end = min(line_end(text, a), stop)
        widths.append(first_end(text, a, end) - a)
        a = end + 1
    return max(widths)


def _block_end(text: str, i: int) -> int:
    """Where the block whose first line starts at `i` ends: at the end of its last line before a blank line,
    a time line or the text's end; at `i` where that line is empty."""
    stop = line_end(text, i)
    while stop > i and stop + 1 < len(text) and text[stop + 1] != "\n" and not _TIME_LINE.match(text, stop + 1):
        stop = line_end(text, stop + 1)
    return stop
