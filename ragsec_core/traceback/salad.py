"""Keyword salad: words without grammar, as keyword stuffing and optimised token strings leave them.

Written language of any register carries articles, prepositions and auxiliaries; retrieval bait that
stuffs the query's words (bait-noise), an obfuscated token soup and a HotFlip prefix do not. `splice` reads
salad as planted text that marks the block it sits in: a sentence of it (`is_word_salad`), a run of it
glued into a host sentence (`glued_salad`), and the salad right before or after a claim (`salad_before`,
`salad_after`); `stuffed` says whether it is aimed at the query. `cohesion` does not grow a block that ends in it.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import STOPWORDS, tokenize, word_spans
from ragsec_core.data.spans import Span, find_ci
from ragsec_core.traceback.marks import aimed

SALAD_MIN_WORDS = 4
SALAD_FUNCTION_SHARE = 0.05
SALAD_RUN_WORDS = 16  # words without a function word or a comma that make a salad run inside a sentence
SALAD_REACH = 3  # sentences after the claim block within which a salad run still belongs to it
_CLAUSE_MARK = re.compile(r"[.!?,;:()\"“”]")  # punctuation of written clauses, which keyword salad lacks


def glued_salad(text: str, sent: Span, anchor: str, query: str) -> Span | None:
    """Keyword stuffing glued to host text inside one sentence (no full stop between them): in a sentence
    that is not salad as a whole, a run of at least `SALAD_RUN_WORDS` words without a function word or
    clause punctuation that states the event string and holds `marks.BAIT_SHARE` of the query's content words.
    Written English does not go on that long without an article, a preposition, an auxiliary or a comma."""
    a, b = sent
    if is_word_salad(text[a:b]):
        return None
    best: tuple[int, int] | None = None
    run: list[tuple[int, int, str]] = []
    for w in word_spans(text[a:b]) + [(b - a, b - a, "the")]:  # a closing stopword ends the last run
        if w[2] not in STOPWORDS and not (run and _CLAUSE_MARK.search(text[a + run[-1][1] : a + w[0]])):
            run.append(w)
            continue
        if len(run) >= SALAD_RUN_WORDS and (best is None or run[-1][1] - run[0][0] > best[1] - best[0]):
            best = (a + run[0][0], a + run[-1][1])
        run = [w] if w[2] not in STOPWORDS else []
    if best is None or not find_ci(text[best[0] : best[1]], anchor):
        return None
    return best if aimed(set(tokenize(text[best[0] : best[1]])), query) else None


def salad_after(texts: list[str], hi: int, reach: int = SALAD_REACH) -> int:
    """The block's last sentence once keyword stuffing that starts within `reach` sentences after it is
    taken in: planted text is contiguous, so the sentences between the claim and the stuffing are planted
    too. A salad run goes on over fragments of any length without function words."""
    start = next((k for k in range(hi + 1, min(len(texts), hi + 1 + reach)) if is_word_salad(texts[k])), None)
    if start is None:
        return hi
    end = start
    while end + 1 < len(texts) and is_word_salad(texts[end + 1], fragment=True):
        end += 1
    return end


def salad_before(texts: list[str], lo: int) -> int:
    """The block's first sentence once keyword stuffing right before it is taken in."""
    while lo > 0 and is_word_salad(texts[lo - 1]):
        lo -= 1
    return lo


def is_word_salad(sentence: str, fragment: bool = False) -> bool:
    """Words without grammar: at least `SALAD_MIN_WORDS` words (any number for a `fragment` that continues
    a run) of which under `SALAD_FUNCTION_SHARE` are function words. Written language of any register
    carries articles, prepositions and auxiliaries; keyword stuffing and optimised token strings do not."""
    words = word_spans(sentence)
    if not words or (len(words) < SALAD_MIN_WORDS and not fragment):
        return False
    return sum(w in STOPWORDS for _, _, w in words) / len(words) < SALAD_FUNCTION_SHARE


def stuffed(texts: list[str], k: int, query: str) -> bool:
    """Keyword salad at the claim sentence `k` (the claim itself, the salad right before it, or within
    `SALAD_REACH` sentences after it, as `region` takes it in) whose words hold `marks.BAIT_SHARE` of the query's
    content words: stuffing aimed at this query. Written text, a host's lists included, keeps its function
    words."""
    salad = texts[salad_before(texts, k) : salad_after(texts, k) + 1]  # the claim itself may be salad (soup)
    return aimed({w for t in salad if is_word_salad(t, fragment=True) for w in tokenize(t)}, query)
