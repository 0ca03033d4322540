"""Typo-perturbed text: the evidence of where a corrupted copy of a passage starts and stops.

Not every poison adds a claim. GARAG-style attacks perturb the characters of a passage the retriever
already ranks ("tha fourt seoson ow Chicago Fire … wass oldered") until the model errs, and the planted
text is every perturbed sentence, including those that state nothing the event needs. Pass-1 finds the
sentence the event needs; the rest of the copy is marked by its spelling, which the host's text does
not share. So a block that holds a misspelled sentence grows over the misspelled sentences next to it,
in both directions, up to the first one spelled like the host.

A word is a near-miss when it is written in lower case (a capitalised word may be a name), has at least
`MIN_LETTERS` letters, is unknown to an English dictionary (pyspellchecker's frequency list, with British
spellings read as their American twins) and lies one edit from a word the dictionary knows ("wass",
"seoson"; a rare word such as "midpiece" has no such neighbour). A sentence is misspelled with at least
`TYPO_MIN` distinct near-misses making up at least `TYPO_SHARE` of its lower-case words. Both constants were
fixed on benign text only: of the 8,054 sentences (`sentence_spans`) of the 2,000 clean Wikipedia passages
in `../shared/data/stealthy`, none is misspelled by this rule, against 237 with one near-miss and 34 with
two at any share (a French title, two chemical names, repeated "metre"s). Of the 2,198 sentences of
RAGDefender's 590 GARAG NQ copies, 1,961 are.
"""

from __future__ import annotations

import re
from functools import lru_cache

from spellchecker import SpellChecker

from ragsec_core.data.spans import Span, sentence_spans

MIN_LETTERS = 3
TYPO_MIN = 2  # distinct near-misses a misspelled sentence holds at least
TYPO_SHARE = 0.25  # share of its lower-case words they make up at least
# a lower-case word standing alone: not part of a contraction, hyphenation, number or accented word
_WORD = re.compile(r"(?<![\w'’-])[a-z]+(?![\w'’-])")
# British spellings and their American twins, which the dictionary knows ("metres", "harbour", "recognised")
_BRITISH = (("our", "or"), ("re", "er"), ("res", "ers"), ("ise", "ize"), ("ised", "ized"), ("ises", "izes"),
            ("ising", "izing"), ("isation", "ization"), ("ll", "l"), ("ae", "e"), ("mme", "m"), ("ence", "ense"),
            ("ogue", "og"))


@lru_cache(maxsize=1)
def _dictionary() -> SpellChecker:
    """The English dictionary, loaded once per process (0.15 s, 160,000 words)."""
    return SpellChecker(language="en", distance=1)


def _known(word: str) -> bool:
    words = _dictionary()
    return word in words or any(a in word and word.replace(a, b) in words for a, b in _BRITISH)


def near_misses(sentence: str) -> set[str]:
    """The sentence's lower-case words that read as misspellings of a known word (module docstring)."""
    return _near_misses(_WORD.findall(sentence))


def _near_misses(lower: list[str]) -> set[str]:
    words = _dictionary()
    return {w for w in lower if len(w) >= MIN_LETTERS and not _known(w) and words.known(words.edit_distance_1(w))}


def is_misspelled(sentence: str) -> bool:
    """At least `TYPO_MIN` distinct near-misses, making up at least `TYPO_SHARE` of its lower-case words."""
    lower = _WORD.findall(sentence)
    typos = _near_misses(lower)
    return len(typos) >= TYPO_MIN and len(typos) >= TYPO_SHARE * len(lower)


def grow(text: str, block: Span) -> Span:
    """The block grown over the misspelled sentences on either side of it, if a sentence it overlaps is
    misspelled itself; otherwise the block unchanged (a fluent poison is not a perturbed copy). Every
    attribution passes here, so a sentence is checked only when the result depends on it: the block's own
    first, its neighbours only for a misspelled block."""
    sentences = sentence_spans(text)

    def misspelled(i: int) -> bool:
        return is_misspelled(text[sentences[i][0] : sentences[i][1]])

    inside = [i for i, s in enumerate(sentences) if s[0] < block[1] and block[0] < s[1]]
    if not any(misspelled(i) for i in inside):
        return block
    first, last = inside[0], inside[-1]
    while first > 0 and misspelled(first - 1):
        first -= 1
    while last + 1 < len(sentences) and misspelled(last + 1):
        last += 1
    return min(block[0], sentences[first][0]), max(block[1], sentences[last][1])
