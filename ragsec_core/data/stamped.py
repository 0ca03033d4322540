"""Lines opened by time stamps inside a passage, read as units: a chat export's turns and an application's
log excerpt.

A RAG system that indexes a team's chats or an application's logs holds lines a program stamped: a chat
client's `[09:14] quietfox42: …`, a messaging app's export (`14/03/2025, 21:07 - Name: …` on Android,
`[14/03/2025, 21:07:33] Name: …` on iOS), ISO 8601's and syslog's stamps in a log. The sentence split cuts the
messages at their full stops and leaves each line's stamp on the sentence before it, so two or more stamped
lines in a row are one unit, open (`formats.FORMAT_UNITS`): its last line runs to its first sentence end,
or to a clause opener between two lower-case words (`layout.raised_opener_cut`), where the planting glued
the host's next sentence onto a message that ends without a full stop ("oh nice, thank you Its lantern
…"); after a short closing message with no capital, a name so placed cuts too ("oh nice, thank you Rowan
said …").
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import LAST_LINE, LINE_ON, raised_opener_cut

# A chat export's turns, each opened by a time stamp and a handle ("[09:14] quietfox42: …"), two or more in a
# row on one line or on several: one transcript, its last turn to its first sentence end. A time stamp opens
# it wherever it stands (after a bare title host without a full stop too).
_TURN = r"\[\d{1,2}:\d{2}(?::\d{2})?\][ \t]+[^\s:\[\]]{1,30}:[ \t]+"
_TRANSCRIPT = re.compile(rf"{_TURN}(?:.*?\s(?={_TURN}){_TURN})+{LAST_LINE}", re.DOTALL)
# Lines each opened by a time stamp: ISO 8601's ("2023-12-25T23:54:19.777Z", "2024-01-02 10:00:00,123"),
# syslog's ("Dec  8 05:00:33"), or a messaging app's export's day-first or month-first date, a comma and a time
# ("14/03/2025, 21:07", "3/14/25, 9:07 PM"), each maybe in brackets, the export's dash after it; whatever
# follows (a level, a host, a component, a sender, the message). Two or more such lines are one excerpt, as a
# chat's turns are. A message of several lines goes on over lines without a stamp (`_MOST_GOING_ON` of them
# between two stamped lines; a log's stack trace alike). As a chat's time stamp does, the first stamp opens
# the excerpt wherever it stands: a date and a time followed by a line break and another stamp is no prose.
_STAMP = (r"(?<![\w:.-])\[?(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d{1,6})?)?(?:Z|[+-]\d\d:?\d\d)?"
          r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ \t]+\d{1,2}[ \t]+\d\d:\d\d:\d\d"
          r"|\d{1,2}/\d{1,2}/\d{2,4},[ \t]\d{1,2}:\d\d(?::\d\d)?(?:[ \t]?[AP]M)?)\]?(?:[ \t]+-)?[ \t]+")
_MOST_GOING_ON = 6
_SENDER = re.compile(r"[^\n:]{1,40}:[ \t]")  # a chat export's sender after the stamp ("Ola Brandt: ")
_LINE = rf"{_STAMP}{LINE_ON}(?:(?!{_STAMP}){LINE_ON}){{0,{_MOST_GOING_ON}}}"
_LOG = re.compile(rf"(?:{_LINE})+({_STAMP}){LAST_LINE}")


def excerpts(text: str) -> tuple[tuple[Span, bool], ...]:
    """The chat transcripts and stamped excerpts of the text, each open (its last line runs to its first
    sentence end)."""
    turns = [m.span() for m in _TRANSCRIPT.finditer(text)]
    logs = [(m.start(), _last_end(text, m.end(1), m.end())) for m in _LOG.finditer(text)]
    return tuple((span, False) for span in turns + logs)


def _last_end(text: str, a: int, b: int) -> int:
    """Where an excerpt's last line, from its stamp's end `a` to its first sentence end `b`, ends: before the
    host's sentence glued on (`layout.raised_opener_cut`, read from the message's start past its sender)."""
    sender = _SENDER.match(text, a, b)
    cut = raised_opener_cut(text, sender.end() if sender else a, b, casual=True)
    return b if cut is None else cut
