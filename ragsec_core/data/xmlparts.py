"""XML inside a passage, read as units: a whole document from its prolog to its root element's close, and
an element whose name carries a namespace prefix, from its opening tag to its close, with the siblings of
its name right after it.

A RAG system that indexes office documents or feeds through an XML extractor holds their markup: a Word
document's `document.xml` keeps each paragraph as a `<w:p>` element whose text sits in runs (`<w:r><w:t>`),
cut wherever the formatting or an editing session changed. The tags are no words (`tags.MARKUP`), but the
sentence split still runs the last paragraph's close into the host's next sentence, and a paragraph's text
cut into runs reads as one sentence only between its tags. So a namespaced element (`w:p`, `w:document`),
at a sentence boundary, with the elements of its name that follow it (only spaces between), is one closed
unit; HTML's unprefixed elements keep the element rule of the boundary (`splice`). A whole XML file (an
app bundle's property list, a settings file) opens with a prolog, an XML declaration (`<?xml …?>`) or a
document type (`<!DOCTYPE …>`), which are no tags of `tags.MARKUP`: the split reads "DOCTYPE plist PUBLIC
…" as words and cuts the root element's strings at their full stops. So the prolog, with the comments in
it, and the root element after it to its close are one closed unit (`documents`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span, Unit, outermost
from ragsec_core.data.tags import PREFIXED_NAME, TAG_NAME, element_end

_OPENING = re.compile(rf"(?<![^\s])<({PREFIXED_NAME})(?:\s[^<>]*)?>")
# an XML file's prolog: its declaration or its document type first, then either of them and comments
_PROLOG_PART = r"<\?xml\s[^<>]{0,300}\?>|<!DOCTYPE\s[^<>]{1,300}>"
_PROLOG = re.compile(rf"(?<![^\s])(?:{_PROLOG_PART})(?:\s*(?:{_PROLOG_PART}|<!--.{{0,300}}?-->))*\s*(?=<{TAG_NAME}[\s/>])", re.S)


def documents(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's XML documents, each closed: from its prolog (`_PROLOG`) to the close of the root element
    right after it; none where that element does not close in the text."""
    return outermost(_PROLOG, text, _document)


def _document(text: str, prolog: re.Match[str]) -> Unit | None:
    """The document that `prolog` opens, to its root element's close, or None where it does not close."""
    end = element_end(text, prolog.end())
    return None if end is None else ((prolog.start(), end), True)


def elements(text: str) -> tuple[tuple[Span, bool], ...]:
    """The namespaced elements of the text that close, each with the siblings of its name right after it
    (`_siblings`), closed; outermost only (a paragraph inside a document is the document's)."""
    return outermost(_OPENING, text, _element)


def _element(text: str, opening: re.Match[str]) -> Unit | None:
    """The element that `opening` opens with its siblings (`_siblings`), or None where it does not close."""
    end = element_end(text, opening.start())
    return None if end is None else ((opening.start(), _siblings(text, end, opening.group(1))), True)


def _siblings(text: str, end: int, name: str) -> int:
    """Where the run of `name` elements that the one ending at `end` opens ends: over each element of that
    name that follows, only spaces between, to its close."""
    sibling = re.compile(rf"\s*(<{re.escape(name)})[\s>]")
    while (m := sibling.match(text, end)) is not None and (close := element_end(text, m.start(1))) is not None:
        end = close
    return end
