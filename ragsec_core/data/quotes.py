"""Quotations read as units: a speaker's words between quotation marks, with the sentence that frames them.

A quotation is one speaker's text, however many sentences the split cuts it into: `In a 2019 interview, X
said: "<first>. <second>."` or `"<first>. <second>." said X, …`. The split reads each of its sentences
alone (and takes a lowercase "said X, …" after the closing mark for a sentence of its own), so a block
drawn around the sentence that states the answer ends inside the quotation, or starts inside it and is
then read back past its frame into the host (`premise`). The boundary grows such a block over the whole
quotation (`whole_quotation`): from the start of the sentence its opening mark stands in to the end of the
sentence its closing mark ends, and over a lowercase sentence right after it, the attribution the split
cut off. Only a block that reaches the sentence of its opening or its closing mark grows: a poison
planted between two sentences of a host's own quotation lies strictly inside it and stays as drawn. Not
part of the sentence split (`spans.sentence_spans`), which decides where a benchmark plants: reading a host's
quotations as one sentence would move the planting of every run.

An aside is read the same way: sentences set off in round brackets that open a sentence of their own
("(Editor's note: … were built. Two were shown.)"). A bracket has no frame and no attribution, so its unit
is the brackets and what they hold.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ragsec_core.data.markup import records
from ragsec_core.data.spans import Span, sentence_spans

# A double quotation mark that opens (at the text's start or after a space, a bracket or a colon, before a
# word or a single quotation mark) or closes (after a word or a mark, before a space, a mark or the end).
# A quotation runs from an opening mark to the close that balances it (a title quoted inside it nests), at
# most `QUOTE_REACH` characters and no blank line (a mark left open opens nothing), and its words end a
# sentence before the close: a quoted title ("I Wan'na Be like You" is a song) is a name, not a speaker's.
_MARK = re.compile(r"[\"“”]")
_FOLLOWS_CLOSE = ".,;:!?)]['’\"”"  # what may follow a closing mark: a citation's bracket, a comma
QUOTE_REACH = 1200


def quotations(text: str) -> list[Span]:
    """The text's quotations, each from the start of the sentence its opening mark stands in to the end of
    the sentence its closing mark ends, with a sentence right after it that opens in lowercase (the
    attribution "said X, …" the split cut off), and its asides (`_asides`)."""
    return [unit for unit, _, _ in _framed(text)]


@lru_cache(maxsize=512)
def _framed(text: str) -> tuple[tuple[Span, Span, Span], ...]:
    """Each quotation (`quotations`) with the sentence its opening mark stands in and the one its closing
    mark ends: one reading per text, as `markup.records`, since `splice.marked_start` and `whole_quotation`
    ask for the same chunk's on every block the boundary or Pass-1 draws."""
    sents = sentence_spans(text, limit=len(text))
    out: list[tuple[Span, Span, Span]] = []
    for start, end in sorted(_marked(text) + _asides(text, sents)):
        first = next((i for i, (a, b) in enumerate(sents) if a <= start < b), None)
        last = next((i for i, (a, b) in enumerate(sents) if a < end <= b), None)
        if first is None or last is None or (out and sents[first][0] < out[-1][0][1]):
            continue
        aside = text[start] == "("
        said = last + 1 if not aside and last + 1 < len(sents) and text[sents[last + 1][0]].islower() else last
        out.append(((sents[first][0], sents[said][1]), sents[first], sents[last]))
    return tuple(out)


def _asides(text: str, sents: list[Span]) -> list[Span]:
    """Each aside: a round bracket that opens a sentence of its own and closes, balanced, right after a
    sentence's end ("(Editor's note: … were built. Two were shown.)"), within `QUOTE_REACH` characters and no
    blank line. Its writer set the sentences off from the text around them, as a speaker's words are; a
    bracket inside a sentence ("(born 1950)", "(formerly known as …)") is a phrase of that sentence."""
    out: list[Span] = []
    for start, _ in sents:
        if text[start] != "(" or (out and start < out[-1][1]):
            continue
        depth = 0
        for i in range(start, min(len(text), start + QUOTE_REACH)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0 or text.startswith("\n\n", i):
                break
        if depth == 0 and text[i] == ")" and text[start:i].rstrip("\"'”’")[-1:] in (".", "!", "?"):
            out.append((start, i + 1))
    return out


def _marked(text: str) -> list[Span]:
    """Each outermost quotation's marks: from its opening mark to the end of the closing mark that balances it,
    where a sentence's end comes right before that mark. A mark that neither opens nor closes (glued between
    two words: `singing."Judy`, where a planting joined two texts) leaves the scan unsure, and the quotation
    open at it is dropped; marks inside a structured unit (a JSON record's strings) are its syntax."""
    units = records(text)
    out: list[Span] = []
    depth, start = 0, 0
    for m in _MARK.finditer(text):
        i = m.start()
        if any(u <= i < v for u, v in units):
            continue
        before, after = text[i - 1 : i], text[i + 1 : i + 2]
        if depth and (i - start > QUOTE_REACH or "\n\n" in text[start:i]):
            depth = 0  # left open: it opened nothing
        if (not before or before.isspace() or before in "(:") and (after.isalnum() or after in "'‘"):
            start = i if depth == 0 else start
            depth += 1
        elif depth and not before.isspace() and (not after or after.isspace() or after in _FOLLOWS_CLOSE):
            depth -= 1
            if depth == 0 and before in ".!?":
                out.append((start, i + 1))
        else:
            depth = 0
    return out


def whole_quotation(text: str, span: Span) -> Span:
    """The span grown over each quotation whose opening or closing sentence it reaches (module docstring); a
    span between those two sentences, or outside every quotation, as it was."""
    a, b = span
    for unit, opening, closing in _framed(text):
        if any(u < b and a < v for u, v in (opening, closing)):
            a, b = min(a, unit[0]), max(b, unit[1])
    return a, b
