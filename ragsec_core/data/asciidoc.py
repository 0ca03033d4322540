"""AsciiDoc source inside a passage, read as units: a run of lines that AsciiDoc's own marks hold together.

A RAG system over a documentation repository (Antora sites, a project's `docs/`) holds AsciiDoc as its
writers typed it: a document title (`= …`) with an author line and attribute entries (`:revdate: …`),
section titles (`== …`), a block's attribute line (`[IMPORTANT]`) and title line (`.…`), delimited blocks
between lines of four or more `=`, `-`, `*`, `_`, `.` or `+`, admonition paragraphs (`TIP: …`) and macros
(`xref:page.adoc[…]`), with prose often written one sentence a line. The sentence split reads a title as
the first words of the sentence below it, a delimiter line as a word of the sentence around it, and runs
the last line into the host's sentence the planting glued on. So the lines from one such mark to the last
of a run of them, no more than `_MOST_APART` lines between two, are one unit when the run holds
`_LEAST_MARKS` marks besides its delimiters, one a section's title, a block's attribute line, an admonition
or a macro (a delimiter may be Markdown's rule or reStructuredText's adornment, an attribute entry an RST
field, a block title roff's request). It starts at its first line's own part (after the host's last
sentence on it) and ends at its last mark's line: a delimiter line closes it, a paragraph line ends at its
first sentence end past its last macro (which closes it too).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import first_end, own_start

# the marks that AsciiDoc alone writes, each as a whole line's (but the admonition and the macro)
_ADMONITIONS = "NOTE|TIP|IMPORTANT|WARNING|CAUTION"
_TITLE = r"={1,6}[ \t]+[^\n]*[^\s=]"  # `== Title`, not MediaWiki's `== Title ==`
_ATTRIBUTE = r":!?[a-z0-9_][\w-]{0,40}!?:(?:[ \t][^\n]*)?"  # `:revdate: 2025-01-06`
_BLOCK_ATTRIBUTES = rf"\[(?:{_ADMONITIONS}|source|listing|literal|quote|verse|sidebar|example|abstract|discrete|[#.][A-Za-z][\w-]*)(?:,[^\]\n]{{0,80}})?\]"
_BLOCK_TITLE = r"\.(?!(?:[A-Z]{1,2}|[a-z]{2})(?:[ \t]|$))[A-Za-z0-9\"'][^\n]{0,120}"  # not roff's `.SH`, `.PP`, `.br`
_TITLED = re.compile(rf"(?:{_TITLE}|{_BLOCK_ATTRIBUTES})[ \t]*$")  # a section's title, a block's attributes
_HEADER = re.compile(rf"(?:{_ATTRIBUTE}|{_BLOCK_TITLE})[ \t]*$")  # an attribute entry, a block's title
_ADMONITION = re.compile(rf"(?:{_ADMONITIONS}):[ \t]+\S")
_DELIMITER = re.compile(r"(?:={4,}|-{4,}|\*{4,}|_{4,}|\.{4,}|\+{4,})(?=[ \t]|$)")  # the host's words may follow the last
_MACRO = re.compile(r"\b(?:xref|link|image|include|footnote|kbd|btn|menu|mailto|https?):[^\s\[\]]*\[[^\]\n]{0,200}\]")
_LINE = re.compile(r"(?m)^.*")
_MOST_APART = 8  # lines between two marks of one run (a paragraph one sentence a line)
_LEAST_MARKS = 2  # of AsciiDoc's own marks in a run (a delimiter not counted), one at least a title or a paragraph's


def units(text: str) -> tuple[tuple[Span, bool], ...]:
    """The AsciiDoc runs of the text (`_runs`), each from its first mark to its last mark's end, closed
    where a delimiter or a macro's paragraph line ends it (a title's or an admonition's last line is open:
    the text after it may go on with it)."""
    found: list[tuple[Span, bool]] = []
    for marks in _runs(text):
        kinds = [kind for kind, _ in marks]
        if len(kinds) - kinds.count("delimiter") < _LEAST_MARKS or not {"title", "line"} & set(kinds):
            continue
        (_, (start, _)), (kind, (c, d)) = marks[0], marks[-1]
        if kind == "line":
            macro = list(_MACRO.finditer(text, c, d))
            found.append(((start, first_end(text, macro[-1].end() if macro else c, d)), bool(macro)))
        else:
            found.append(((start, d), kind == "delimiter"))
    return tuple(found)


def _runs(text: str) -> list[list[tuple[str, Span]]]:
    """The text's marks (`_mark`: kind, where it starts and ends) in runs: a line more than `_MOST_APART`
    lines past the run's last mark starts a new run."""
    runs: list[list[tuple[str, Span]]] = []
    gap = _MOST_APART + 1
    for m in _LINE.finditer(text):
        mark = _mark(text, *m.span())
        if mark is None:
            gap += 1
            continue
        if gap > _MOST_APART:
            runs.append([])
        runs[-1].append(mark)
        gap = 0
    return runs


def _mark(text: str, a: int, b: int) -> tuple[str, Span] | None:
    """What AsciiDoc mark the line `text[a:b]` is, read from its start or else from its own part
    (`layout.own_start`: the planting glues a run's first line onto the host's last sentence), and where
    its mark ends: a delimiter (at its last mark; the host's words may be glued on after a run's last
    line), a title (a section's title, a block's attribute line), a header (an attribute entry, a block's
    title line), a paragraph line with an admonition label or a macro; None for a line of prose. A
    mark's span runs from where it was read to its end."""
    for i in dict.fromkeys((a, own_start(text, a, b))):
        if delimiter := _DELIMITER.match(text, i, b):
            return "delimiter", (i, delimiter.end())
        if _TITLED.match(text, i, b):
            return "title", (i, b)
        if _HEADER.match(text, i, b):
            return "header", (i, b)
        if _ADMONITION.match(text, i, b) or _MACRO.search(text, i, b):
            return "line", (i, b)
    return None
