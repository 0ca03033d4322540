"""Markup and structured data inside a passage, read as units.

A scraper that keeps HTML leaves tags in a chunk, and one that keeps a page's scripts or tables leaves its
structured data (a JSON record: schema.org's FAQPage, an API's answer; a markdown table). spaCy's
sentencizer reads none of them: it glues "head.</div> Also, …" into one sentence, cuts "-->" in two, cuts
a JSON record after every '?",' and runs a table's last cell into the host sentence after it. The sentence
split (`spans.sentence_spans`) reads the prose with all of them blanked out (`blank`), gives each tag back
to the sentence it opens or closes (`with_markup`) and each structured unit (`records`) back as a sentence
of its own, and cuts around text a browser hides (`hidden_elements`). The boundary reads the marks they
carry: an element a browser hides (`opens_hidden`) and where it closes (`element_end`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ragsec_core._util.text import Span

# A markup tag: an element's opening or closing tag, or a comment's delimiters.
MARKUP = re.compile(r"<!--|-->|</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
# An opening tag whose content a browser does not render: a comment, the `hidden` attribute (not CSS's
# "overflow: hidden"), or a style that hides it. Text that a reader never sees and a model reads is the
# classic vehicle of indirect prompt injection; a page's visible text has no reason to hide a claim.
_HIDES = re.compile(r"<!--|<[A-Za-z][^<>]*(?:(?<!:)\shidden(?=[\s=/>])|display\s*:\s*none|visibility\s*:\s*hidden)[^<>]*>",
                    re.IGNORECASE)
_DECODER = json.JSONDecoder()
# A markdown table: two or more rows on consecutive lines, each of two or more cells between pipes (the
# header and its `|---|` rule count as rows), with its title when a short line without a sentence's end
# or a citation marker stands right above it ("Quick facts"). It runs to its last row's last pipe: text
# after that on the same line is not a cell.
_ROW = r"\|(?:[^|\n]*\|){2,}"
_TITLE = r"(?:[^\s|.!?\[\]][^\n|.!?\]]{0,39}[ \t]*\n[ \t]*)?"  # not a citation marker's "[4]"
_TABLE = re.compile(_TITLE + _ROW + r"(?:[ \t]*\n[ \t]*" + _ROW + r")+")


def markup_tags(text: str) -> list[Span]:
    """Every markup tag in the text."""
    return [m.span() for m in MARKUP.finditer(text)]


def records(text: str) -> list[Span]:
    """The structured units of the text, in order: JSON records (`json_records`) and markdown tables,
    outermost only (a table inside a record's string is the record's)."""
    found = sorted(json_records(text) + [m.span() for m in _TABLE.finditer(text)])
    out: list[Span] = []
    for a, b in found:
        if not out or a >= out[-1][1]:
            out.append((a, b))
    return out


def json_records(text: str) -> list[Span]:
    """The JSON objects in the text that parse as JSON and hold at least one key, outermost only. A
    formula's braces (`{\\displaystyle …}`) or a Python dict's quotes do not parse, so prose keeps them."""
    out: list[Span] = []
    i = text.find("{")
    while i >= 0:
        try:
            value, end = _DECODER.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict) and value:
            out.append((i, end))
        i = text.find("{", end)
    return out


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
    if m.group() == "<!--":
        close = text.find("-->", m.end())
        return None if close < 0 else close + 3
    name = re.match(r"<([A-Za-z][\w-]*)", m.group()).group(1).lower()  # type: ignore[union-attr]
    depth = 1
    for t in MARKUP.finditer(text, m.end()):
        tag = t.group().lower()
        if re.match(rf"</?{re.escape(name)}[\s>/]", tag):
            depth += -1 if tag.startswith("</") else 0 if tag.endswith("/>") else 1
            if depth == 0:
                return t.end()
    return None


def _hides(tag: str) -> bool:
    """The tag opens an element or comment that a browser does not render."""
    return _opens(tag) and _HIDES.fullmatch(tag) is not None


def _opens(tag: str) -> bool:
    return tag == "<!--" or (tag != "-->" and not tag.startswith("</") and not tag.endswith("/>"))


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
