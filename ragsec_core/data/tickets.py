"""Issue-tracker tickets inside a passage, read as units: a tracker's export or notification (a keyed title,
fields, the description, a footer) and a web tracker's issue (a title with its number, the status line,
the body, the labels).

A RAG system that answers a team's questions from its tracker holds tickets as the tracker exported or
mailed them: `[KB-370] <title>`, field lines (`Key:`, `Status: … Priority: …`, `Reporter:`), `Description:`
and the text, then a notification's footer after a `--` line; or a web page's text, `<title> #364`, the
status line (`Open · dana opened this issue on …`), the body and a `Labels:` line. The sentence split reads
the title as words of the host's sentence before it and the footer or the labels as the host's next
sentence, so the block starts at the field lines and stops before the footer. A ticket is one unit from
its title: closed at its footer's first sentence end or before the sentence the planting glued onto its
labels (`layout.value_end`); without either, its last line runs to its first sentence end.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import last_line_end, line_start, own_start, value_end

_KEYED = re.compile(r"(?<!\S)\[[A-Z][A-Z0-9]{1,9}-\d{1,6}\][ \t][^\n]{1,200}\n(?:[A-Z][\w ]{0,30}:[^\n]{0,200}\n){1,12}"
                    r"(?:[ \t]*\n)?Description:[ \t]*\n?")
_WEB = re.compile(r"[ \t]#\d{1,6}[ \t]*\n(?:Open|Closed)[ \t]\u00b7[ \t][^\n]{1,200}\n")
_BLANK = re.compile(r"\n[ \t]*\n")
_FOOTER = re.compile(r"\n[ \t]*\n--[ \t]?\n")
_LABELS = re.compile(r"\n[ \t]*\n(?:Labels|Tags|Milestone):[ \t]")
_MOST_BODY = 4000  # characters of a ticket's description or body


def tickets(text: str) -> tuple[tuple[Span, bool], ...]:
    """The tickets of the text, each with whether it is closed: an export from its keyed title, a web
    issue from its title (`_title_start`), each over its body to its footer or labels (`_end`)."""
    found = [(m.start(), m.end()) for m in _KEYED.finditer(text)]
    found += [(_title_start(text, m.start()), m.end()) for m in _WEB.finditer(text)]
    return tuple(((a, end), closed) for a, body in sorted(found) for end, closed in [_end(text, body)])


def _title_start(text: str, mark: int) -> int:
    """Where a web issue's title, on the line that ends at its number's `mark`, starts: after the line's
    last sentence end before the title's own (the planting glues the title onto the host's sentence)."""
    return own_start(text, line_start(text, mark), mark)


def _end(text: str, body: int) -> tuple[int, bool]:
    """Where a ticket whose body starts at `body` ends: at its footer's first line's first sentence end, or
    at its labels' line cut before the host's sentence (closed); else at its body's last line's first
    sentence end (open). The body runs to the footer or the labels, else to the blank line after it."""
    stop = min(len(text), body + _MOST_BODY)
    blank = _BLANK.search(text, body, stop)
    if blank is not None and (footer := _FOOTER.match(text, blank.start())) is not None:
        return last_line_end(text, footer.end()), True
    if blank is not None and (labels := _LABELS.match(text, blank.start())) is not None:
        return value_end(text, labels.end()), True
    last = text.rfind("\n", body, blank.start() if blank is not None else stop) + 1
    return last_line_end(text, max(last, body)), False
