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
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Unit, outermost
from ragsec_core.data.layout import MOST_LINES, last_line_end, line_end, raised_opener_cut, value_end

# the sections an ASS or SSA script holds, under their headers
_SECTIONS = r"(?:Script Info|V4\+? Styles|Events|Fonts|Graphics|Aegisub Project Garbage|Aegisub Extradata)"
_HEADER = re.compile(rf"(?<!\S)\[{_SECTIONS}\][ \t]*\n")
_FIELD = re.compile(r"[A-Za-z][\w ]{0,30}:[ \t]*(?=\S)")  # `Title: …`, `Format: …`, `Dialogue: …`
_EVENT = re.compile(r"(?:Dialogue|Comment):[ \t]*(?:[^,\n]*,){9}")  # a subtitle's line to its text
_LEAST = 2  # field lines a script holds at least (an events section's `Format:` and one `Dialogue:`)


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
