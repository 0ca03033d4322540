"""A BibTeX entry inside a passage, read as one unit.

A researcher's library, a paper's repository or a reference manager's export holds its references as
BibTeX entries: `@misc{key,` then one `name = {value}` field a line (a long value wrapped, its continuation
lines aligned under its first), TeX's specials escaped (`\\&`, `{\\"o}`), and the closing brace on a line
of its own. The sentence split reads the field names, the equals signs and the braces as words, cuts a
value at its full stops and runs the closing brace into the host's sentence glued on after it. The entry
is one writer's and ends at the brace that closes its `@type{` (`entries`): a closed unit
(`markup.closed_units`), wherever it stands: prose holds no `@misc{key,`.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span, Unit, outermost
from ragsec_core.data.richtext import group_end

_ENTRY = re.compile(r"(?<![\w@])@[A-Za-z]{2,20}[ \t]*(?=\{[^\s,{}]{1,80},)")


def entries(text: str) -> tuple[Span, ...]:
    """The BibTeX entries of the text, each from its `@` to the brace that closes the `{` after its type
    (escaped braces read as text); an entry whose brace does not close is none."""
    return tuple(span for span, _ in outermost(_ENTRY, text, _entry))


def _entry(text: str, m: re.Match[str]) -> Unit | None:
    """The entry whose `@type` `m` matched, to the brace that closes the `{` after it, or None."""
    end = group_end(text, m.end())
    return None if end is None else ((m.start(), end), True)
