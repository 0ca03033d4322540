"""Change-log entries inside a passage, read as units: a Debian package's entry and a GNU ChangeLog's.

A software project's tree holds its change log as its maintainers wrote it. A Debian entry opens with the
package's line (`kb-notes (2.3-1) unstable; urgency=medium`), lists its changes as bullets (`  * …`,
sub-bullets `    - …` wrapped under their dash) and closes with the maintainer's trailer (` -- Name <mail>
date`); a GNU entry opens with a date and the author's line and indents every line under it by a tab
(`\\t* file.txt: …`). The sentence split reads the package's line and the trailer as words of the
sentences around them, so the block leaves the trailer out and the host's sentence glued on after it in,
or starts at the claim's bullet. The Debian entry is closed by its trailer, a closed unit; the GNU entry's
last line runs to its first sentence end (`layout.last_line_end`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import last_line_end, line_end

# a Debian entry's first line: its package, its version in brackets, its suites and its urgency
PACKAGE_LINE = r"[a-z0-9][a-z0-9.+-]{1,60}[ \t]+\([^()\s]{1,40}\)(?:[ \t]+[a-z][\w/-]{1,30})+;[ \t]*urgency=[a-z]+[^\n]*\n"
_DEBIAN = re.compile(rf"(?<!\S){PACKAGE_LINE}")
_TRAILER = re.compile(r"\n[ \t]--[ \t][^\n<>]{1,80}<[^<>\s]{1,80}>[ \t]+(?:[A-Z][a-z]{2},[ \t]+)?\d{1,2}[ \t]+[A-Z][a-z]{2}"
                      r"[ \t]+\d{4}[ \t]+\d\d:\d\d:\d\d[ \t]+[+-]\d{4}")
_GNU = re.compile(r"(?<!\S)\d{4}-\d\d-\d\d[ \t]+[^\n<>]{1,80}<[^<>\s]{1,80}>[ \t]*\n(?:[ \t]*\n)?(?=\t)")
_TABBED = re.compile(r"\n(?:[ \t]*\n)?\t")
_MAX_ENTRY = 8000  # characters between a Debian entry's package line and its trailer


def entries(text: str) -> tuple[tuple[Span, bool], ...]:
    """The change-log entries of the text, each with whether it is closed: a Debian entry from its
    package's line to its trailer (closed), a GNU entry from its date line over its tab-indented lines
    (open: its last line to its first sentence end, `layout.last_line_end`)."""
    found: list[tuple[Span, bool]] = []
    for m in _DEBIAN.finditer(text):
        trailer = _TRAILER.search(text, m.end(), m.end() + _MAX_ENTRY)
        if trailer is not None and _DEBIAN.search(text, m.end(), trailer.start()) is None:
            found.append(((m.start(), trailer.end()), True))
    for m in _GNU.finditer(text):
        last = m.end()
        while (nxt := _TABBED.match(text, line_end(text, last))) is not None:
            last = nxt.end() - 1
        found.append(((m.start(), last_line_end(text, last)), False))
    return tuple(sorted(found))
