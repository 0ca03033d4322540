"""An HL7 v2 message and a GEDCOM record, each read as one unit.

A RAG system over a clinic's message archive or a family-history society's files holds records as the
interchange formats write them, a segment or a tag a line: HL7's segments (`MSH|^~\\&|…`, then
`OBX|1|TX|KBA^Answer^L|1|<text>||||||F`: a three-character segment id and `|`-separated fields, an observation's
or a note's words in one field) and GEDCOM's levelled lines (`0 @I12@ INDI`, `1 NOTE …`, `2 CONC …`: a level,
maybe a cross-reference id, a tag, a value; a long value broken into `CONC` pieces, often inside a word). The
sentence split reads neither: it cuts a field's text at its full stops, leaves the segment ids and tags on the
sentence before, and runs the last line into the host's sentence that the planting glued on. So two or more
segments, or two or more levelled lines, in a row are one closed unit whose last line ends before the first word
that opens the host's sentence (`layout.value_end` from its last field's or its value's start: "…|Reviewed by
Sam Okafor Gathered information …"), else at its first sentence end; a GEDCOM value that is a pointer to another
record (`1 REPO @R1@`) is whole, so the line ends after it ("`@R1@ Edsel Records released …`").
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import MOST_LINES, value_end

_SEGMENT = r"[A-Z][A-Z0-9]{2}\|"  # an HL7 segment's id and its first field separator
_HL7 = re.compile(rf"(?<!\S){_SEGMENT}[^\n]*\n(?:{_SEGMENT}[^\n]*\n){{0,{MOST_LINES}}}{_SEGMENT}[^\n]*")
_LEVELLED = r"\d{1,2}[ ](?:@[^@\s]{1,20}@[ ])?_?[A-Z][A-Z0-9_]{2,4}"  # a GEDCOM line's level, id and tag
_GEDCOM = re.compile(rf"(?<!\S){_LEVELLED}(?:[ ][^\n]*)?\n(?:{_LEVELLED}(?:[ ][^\n]*)?\n){{0,{MOST_LINES}}}"
                     rf"{_LEVELLED}[ ]?(@[^@\s]{{1,20}}@(?!\S))?")  # a last value that points to a record ends there


def messages(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's HL7 messages and GEDCOM records, each closed: an HL7 message's last segment ends where
    its last field does, a GEDCOM record's last line where its value does (`layout.value_end`), or after
    its value where that is a record's pointer."""
    hl7 = [((m.start(), value_end(text, text.rindex("|", m.start(), m.end()) + 1)), True) for m in _HL7.finditer(text)]
    gedcom = [((m.start(), m.end() if m.group(1) else value_end(text, m.end())), True) for m in _GEDCOM.finditer(text)]
    return tuple(hl7 + gedcom)
