"""Markup tags inside a passage: HTML's elements and comments (escaped for XML too, as a feed carries them),
XML's CDATA marks, LaTeX's commands and roff's font changes.

A scraper that keeps HTML leaves tags in a chunk, and a repository of LaTeX sources leaves commands. Tags are
no words of a sentence (`MARKUP`, `TEX_MARK`, `ROFF_MARK`); the sentence split reads the prose with them blanked out
(`blank`) and gives each tag back to the sentence it opens or closes (`with_markup`), and cuts around text a
browser hides (`hidden_elements`). The boundary reads the marks they carry: an element a browser hides
(`opens_hidden`) and where an element closes (`element_end`). Structured units (records, lists, headings)
are `markup`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragsec_core._util.text import Span

# A markup tag: an element's opening or closing tag, a comment's or an XML CDATA section's delimiters, or a
# tag escaped as a feed or an XML store carries HTML inside its own markup ("&lt;p&gt;", "&lt;/p&gt;"): the
# escaped tag is no more a word of the sentence than the tag is. An XML store's names may carry a namespace
# prefix (a Word document's `<w:t>`, a feed's `<dc:creator>`).
_LOCAL_NAME = r"[A-Za-z][\w.-]*"  # a name after a namespace prefix
TAG_NAME = rf"[A-Za-z][\w-]*(?::{_LOCAL_NAME})?"  # an element's name, maybe behind a namespace prefix (`w:p`, `dc:creator`)
PREFIXED_NAME = rf"[A-Za-z][\w-]*:{_LOCAL_NAME}"  # a name with its namespace prefix (`xmlparts`)
MARKUP = re.compile(rf"<!--|-->|<!\[CDATA\[|\]\]>|</?{TAG_NAME}(?:\s[^<>]*)?/?>"
                    rf"|&lt;/?{TAG_NAME}(?:\s(?:(?!&[lg]t;)[^<>\n])*)?/?&gt;")
_DELIMITERS = {"<!--": "-->", "<![CDATA[": "]]>"}  # a comment's and a CDATA section's opening and closing marks
# An opening tag whose content a browser does not render: a comment, the `hidden` attribute (not CSS's
# "overflow: hidden"), or a style that hides it. Text that a reader never sees and a model reads is the
# classic vehicle of indirect prompt injection; a page's visible text has no reason to hide a claim.
_HIDES = re.compile(r"<!--|<[A-Za-z][^<>]*(?:(?<!:)\shidden(?=[\s=/>])|display\s*:\s*none|visibility\s*:\s*hidden)[^<>]*>",
                    re.IGNORECASE)
# A LaTeX command's name, or a pointer command with its key (a label, a reference, a citation): no word of the
# sentence it stands in, as a reference mark is none.
TEX_MARK = re.compile(r"\\(?:label|ref|eqref|cite[pt]?)\{[^{}\n]*\}|\\[A-Za-z]+\*?")
# A roff font change (`\fB`, `\fI`, `\fR`, `\fP`, `\f(BI`, `\f[B]`) or the zero-width `\&` of a manual page's
# source: no word, nor part of the word it is glued to ("\fBAdam" is "Adam" in bold). Read before
# `TEX_MARK`, which would take "\fBAdam" for a command's name.
ROFF_MARK = re.compile(r"\\f(?:[BIRP1-4]|\([A-Z]{2}|\[[A-Z]{0,2}\])|\\&")


def markup_tags(text: str) -> list[Span]:
    """Every markup tag in the text."""
    return [m.span() for m in MARKUP.finditer(text)]


def blank(text: str, spans: Sequence[Span]) -> str:
    """The text with each span's characters blanked to spaces: the same length, so offsets stay the text's."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def hidden_elements(text: str, tags: Sequence[Span]) -> list[Span]:
    """Each element among `tags` that a browser hides, from its opening tag to its close (or the text's
    end). What a reader never sees is no part of a visible sentence: the split cuts around it."""
    return [(a, element_end(text, a) or len(text)) for a, b in tags if _hides(text[a:b])]


def opens_element(sentence: str) -> bool:
    """The sentence starts with an element's opening tag or a comment's opening delimiter."""
    m = MARKUP.match(sentence)
    return m is not None and _opens(m.group())


def opens_hidden(sentence: str) -> bool:
    """The sentence starts with an element or comment that a browser does not render (`_HIDES`)."""
    m = MARKUP.match(sentence)
    return m is not None and _hides(m.group())


def element_end(text: str, start: int) -> int | None:
    """Where the element or comment whose opening tag starts at `start` closes (the end of its closing tag,
    nested elements of its name counted), or None when it does not open one or is not closed in `text`."""
    m = MARKUP.match(text, start)
    if m is None or not _opens(m.group()):
        return None
    if m.group() in _DELIMITERS:
        close = text.find(_DELIMITERS[m.group()], m.end())
        return None if close < 0 else close + len(_DELIMITERS[m.group()])
    name = re.match(rf"<({TAG_NAME})", _plain(m.group())).group(1).lower()  # type: ignore[union-attr]
    depth = 1
    for t in MARKUP.finditer(text, m.end()):
        tag = _plain(t.group()).lower()
        if re.match(rf"</?{re.escape(name)}[\s>/]", tag):
            depth += -1 if tag.startswith("</") else 0 if tag.endswith("/>") else 1
            if depth == 0:
                return t.end()
    return None


def _hides(tag: str) -> bool:
    """The tag opens an element or comment that a browser does not render."""
    return _opens(tag) and _HIDES.fullmatch(_plain(tag)) is not None


def _opens(tag: str) -> bool:
    tag = _plain(tag)
    return tag in _DELIMITERS or (tag not in _DELIMITERS.values() and not tag.startswith("</") and not tag.endswith("/>"))


def _plain(tag: str) -> str:
    """The tag as written unescaped ("&lt;/p&gt;" is "</p>")."""
    return tag.replace("&lt;", "<").replace("&gt;", ">") if tag.startswith("&lt;") else tag


def with_markup(text: str, spans: Sequence[Span], tags: Sequence[Span]) -> tuple[Span, ...]:
    """The sentences read with their markup blanked out, given it back: a tag left between two sentences
    joins the next when it opens an element or a comment, the one before when it closes one (or stands
    alone, `<br/>`), so a hidden claim's sentences carry its wrapper and the host's do not."""
    out = list(spans)
    for a, b in tags:
        if any(s <= a and b <= e for s, e in out):
            continue  # inside a sentence: already covered
        nxt = next((i for i, (s, _) in enumerate(out) if s >= b), None)
        prev = max((i for i, (_, e) in enumerate(out) if e <= a), default=None)
        if nxt is not None and (_opens(text[a:b]) or prev is None):
            out[nxt] = (a, out[nxt][1])
        elif prev is not None:
            out[prev] = (out[prev][0], b)
        else:
            out.append((a, b))
    return tuple(sorted(out))
