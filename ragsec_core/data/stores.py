"""Units that a store's serialisation makes: an SQL dump's statement that writes a row, a news feed's
item, a calendar's or an address book's component, and a multipart message's parts.

A RAG system that indexes a backup or a repository's fixtures holds a database's rows as its dump wrote
them: `INSERT INTO t (…) VALUES (…, 'text', …);`, or PostgreSQL's `COPY t (…) FROM stdin;` over
tab-separated lines closed by a line `\\.`. The sentence split reads neither: it cuts the statement at the
full stops inside its strings and runs the last value, the `');` or the `\\.`, into the host sentence after
it. The statement is one writer's row and ends at a mark of its own (the `;` after its last tuple, the
`\\.`), so it is one closed unit (`markup.closed_units`), wherever it stands: prose holds no `VALUES (` nor
`FROM stdin;`. A statement whose strings or brackets do not close is no unit.

A feed reader's cache holds each item as its feed wrote it: RSS's `<item>` or Atom's `<entry>`, the title,
link, date and the text (in CDATA, or HTML escaped for XML) as its children. The item is one publisher's,
from its opening tag to its closing one (`tags.element_end`): a closed unit too, so the claim's block
takes the title and the date above a claim sentence that names nothing of the question.

A shared calendar or an address book holds iCalendar's and vCard's components as their program wrote them:
`BEGIN:VEVENT` (or `VCARD`), one property a line (`SUMMARY:…`, `DESCRIPTION:…`), commas escaped, every
line longer than 75 octets folded inside a word, then `END:VEVENT`. A raw mail archive holds a multipart
message's parts between its boundary lines, each part's headers over its body (in quoted-printable, say),
to the closing `--boundary--`. Both are closed by their writer's own line (`components`, `mime_parts`): the
sentence split reads neither, and cuts the claim's description at a fold or runs the host's sentence on
from the `END:` or the boundary.

A software project's tree holds its translations as gettext catalogues: an entry's comments (`#.` for
translators, `#:` for the source line), then `msgctxt`, `msgid` and `msgstr`, each a string of quoted pieces
a line each, wrapped after a space. The sentence split reads the pieces' quotation marks and the keywords as
words and runs the last string's closing `""` into the host's sentence after it. The entry is one writer's
and ends at its last string's closing quotation mark (`catalogue_entries`): a closed unit.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.tags import element_end

_NAME = r"[A-Za-z_\"`][\w.\"`]{0,120}"
_COLUMNS = r"(?:\([^()\n]{0,800}\)[ \t]*)?"
_INSERT = re.compile(rf"(?<![\w-])(?:INSERT|REPLACE)[ \t]+(?:OR[ \t]+[A-Z]+[ \t]+)?INTO[ \t]+{_NAME}[ \t]*{_COLUMNS}VALUES[ \t]*(?=\()",
                     re.IGNORECASE)
_COPY = re.compile(rf"(?<![\w-])COPY[ \t]+{_NAME}[ \t]*{_COLUMNS}FROM[ \t]+stdin;[ \t]*\n", re.IGNORECASE)
_COPY_END = re.compile(r"\n\\\.(?=\s|$)")
_FEED_ITEM = re.compile(r"<(?:item|entry)(?:\s[^<>]*)?>", re.IGNORECASE)
_BEGIN = re.compile(r"(?<!\S)BEGIN:([A-Z][A-Z0-9-]{1,40})[ \t]*\r?\n")
_CONTENT_LINE = re.compile(r"[A-Za-z][\w-]*[;:]|[ \t]")  # a property (name, parameters or value next) or a fold
# A multipart message's boundary line (RFC 2046: `--` and up to 70 of its characters), a header line under it
_BOUNDARY = re.compile(r"(?<!\S)--([0-9A-Za-z'()+_,./:=?-]{1,70})[ \t]*\r?\n(?=[A-Za-z][\w-]*:)")
# A gettext catalogue's entry: comment lines, then `msgctxt`, `msgid` (and `msgid_plural`) and `msgstr` (or
# `msgstr[n]`), each keyword's string one quoted piece or several, a line each
_PO_STRINGS = r'[ \t]+"(?:[^"\\\n]|\\.)*"(?:[ \t]*\n[ \t]*"(?:[^"\\\n]|\\.)*")*'
_PO_NEXT = r"[ \t]*\n[ \t]*"
_PO_ENTRY = re.compile(rf"(?<!\S)(?:#[.:,|~]?(?:[ \t][^\n]*)?\n[ \t]*)*(?:msgctxt{_PO_STRINGS}{_PO_NEXT})?msgid{_PO_STRINGS}{_PO_NEXT}"
                       rf"(?:msgid_plural{_PO_STRINGS}{_PO_NEXT})?msgstr(?:\[\d\])?{_PO_STRINGS}"
                       rf"(?:{_PO_NEXT}msgstr\[\d\]{_PO_STRINGS})*")
_MAX_ROW = 20000  # characters of a statement's values (or a COPY block) read before it is taken for no row's


def statements(text: str) -> tuple[Span, ...]:
    """The INSERT statements (to the `;` after their last tuple) and COPY blocks (to their `\\.` line) of
    the text, in order."""
    found = [(m.start(), end) for m in _INSERT.finditer(text) if (end := _values_end(text, m.end())) is not None]
    for m in _COPY.finditer(text):
        close = _COPY_END.search(text, m.end(), m.end() + _MAX_ROW)
        if close is not None:
            found.append((m.start(), close.end()))
    return tuple(sorted(found))


def feed_items(text: str) -> tuple[Span, ...]:
    """The feed items (RSS `<item>`, Atom `<entry>`) of the text that close, each to its closing tag."""
    return tuple((m.start(), end) for m in _FEED_ITEM.finditer(text) if (end := element_end(text, m.start())) is not None)


def components(text: str) -> tuple[Span, ...]:
    """The iCalendar and vCard components of the text (`BEGIN:VEVENT` … `END:VEVENT`, `BEGIN:VCARD` …), each
    to its own `END:` line, where every line between is a content line or a fold's continuation; nested
    ones too (`markup` keeps the outermost)."""
    found: list[Span] = []
    for m in _BEGIN.finditer(text):
        end = re.compile(rf"\r?\nEND:{re.escape(m.group(1))}(?=\s|$)").search(text, m.end(), m.end() + _MAX_ROW)
        if end is not None and all(_CONTENT_LINE.match(line) for line in text[m.end() : end.start()].split("\n")):
            found.append((m.start(), end.end()))
    return tuple(found)


def mime_parts(text: str) -> tuple[Span, ...]:
    """The bodies of multipart messages in the text: from a boundary line over a part's headers to the
    closing boundary (`--B--`), every part between; a boundary never closed is no unit."""
    found: list[Span] = []
    for m in _BOUNDARY.finditer(text):
        close = re.compile(rf"\r?\n--{re.escape(m.group(1))}--(?=\s|$)").search(text, m.end(), m.end() + _MAX_ROW)
        if close is not None and not (found and m.start() < found[-1][1]):
            found.append((m.start(), close.end()))
    return tuple(found)


def catalogue_entries(text: str) -> tuple[Span, ...]:
    """The gettext catalogue entries of the text (`_PO_ENTRY`), each from its first comment line (or its
    first keyword) to its last string's closing quotation mark."""
    return tuple(m.span() for m in _PO_ENTRY.finditer(text))


def _values_end(text: str, i: int) -> int | None:
    """Where the tuples of an INSERT that start at `i` end: after the `;` that follows the last closing
    bracket, strings read as SQL writes them (a quotation mark doubled, or escaped with a backslash, inside
    one), or None where a string or a bracket does not close or no `;` follows."""
    depth, quote, j, stop = 0, "", i, min(len(text), i + _MAX_ROW)
    while j < stop:
        ch = text[j]
        if quote:
            if ch == "\\":
                j += 1
            elif ch == quote:
                if text[j + 1 : j + 2] == quote:
                    j += 1
                else:
                    quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and ch == ";":
            return j + 1
        elif depth == 0 and not (ch.isspace() or ch == ","):
            return None  # after a tuple: only a comma and the next tuple, or the `;`
        j += 1
    return None
