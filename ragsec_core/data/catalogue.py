"""A reference manager's RIS record and a library catalogue's MARC record in MARCMaker text, each read as one
unit.

A RAG system over a group's shared references or a library's catalogue holds records as their tools export
them: RIS's tagged lines (`TY  - JOUR` first, `ER  - ` last, each line a two-letter tag, two spaces, a
hyphen and a value: the abstract `AB`, the notes `N1`), and MARC's fields as MARCMaker writes them (`=LDR`,
then `=245  10$a…`: a three-digit tag, two spaces, the indicators and the `$` subfields; the summary in
`520`, general notes in `500`). The sentence split reads neither: it cuts an abstract at its full stops and
leaves the tags on the sentence before, and runs the record's last line into the host's sentence the
planting glued on. So an RIS record from its `TY` line to its `ER` line is one closed unit, and two or more
MARC fields in a row are one closed unit whose last field ends before the host's sentence glued on: at
the first word that opens a sentence (`layout.value_end`: "…/answers/jumped-space Gathered information
…"), else at its first sentence end.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import MOST_LINES, value_end

_RIS = re.compile(rf"(?<!\S)TY[ ]{{2}}-[ ][A-Z0-9]{{2,6}}[ \t]*\n(?:[A-Z][A-Z0-9][ ]{{2}}-[^\n]*\n){{0,{MOST_LINES}}}?"
                  r"ER[ ]{2}-[ ]?")
_FIELD = r"=(?:LDR|\d{3})[ ]{2}"  # a MARC field's tag as MARCMaker writes it
_MARC = re.compile(rf"(?<!\S){_FIELD}[^\n]*\n(?:{_FIELD}[^\n]*\n){{0,{MOST_LINES}}}({_FIELD})")


def records(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's RIS records and MARC records, each closed."""
    ris = [(m.span(), True) for m in _RIS.finditer(text)]
    marc = [((m.start(), value_end(text, m.end(1))), True) for m in _MARC.finditer(text)]  # its last field's end
    return tuple(ris + marc)
