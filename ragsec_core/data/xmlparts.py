"""Elements of a namespaced XML store inside a passage, read as units: an element whose name carries a
namespace prefix, from its opening tag to its close, with the siblings of its name right after it.

A RAG system that indexes office documents or feeds through an XML extractor holds their markup: a Word
document's `document.xml` keeps each paragraph as a `<w:p>` element whose text sits in runs (`<w:r><w:t>`),
cut wherever the formatting or an editing session changed. The tags are no words (`tags.MARKUP`), but the
sentence split still runs the last paragraph's close into the host's next sentence, and a paragraph's text
cut into runs reads as one sentence only between its tags. So a namespaced element (`w:p`, `w:document`),
at a sentence boundary, with the elements of its name that follow it (only spaces between), is one closed
unit; HTML's unprefixed elements keep the element rule of the boundary (`splice`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.tags import PREFIXED_NAME, element_end

_OPENING = re.compile(rf"(?<![^\s])<({PREFIXED_NAME})(?:\s[^<>]*)?>")


def elements(text: str) -> tuple[tuple[Span, bool], ...]:
    """The namespaced elements of the text that close, each with the siblings of its name right after it
    (`_siblings`), closed; outermost only (a paragraph inside a document is the document's)."""
    found: list[tuple[Span, bool]] = []
    for m in _OPENING.finditer(text):
        if found and m.start() < found[-1][0][1]:
            continue
        end = element_end(text, m.start())
        if end is not None:
            found.append(((m.start(), _siblings(text, end, m.group(1))), True))
    return tuple(found)


def _siblings(text: str, end: int, name: str) -> int:
    """Where the run of `name` elements that the one ending at `end` opens ends: over each element of that
    name that follows, only spaces between, to its close."""
    sibling = re.compile(rf"\s*(<{re.escape(name)})[\s>]")
    while (m := sibling.match(text, end)) is not None and (close := element_end(text, m.start(1))) is not None:
        end = close
    return end
