"""The writer's marks: text that shows it was written for the user's question or for the model alone.

A host passage was written for its own readers. Two things in a chunk say that someone else wrote a part of
it, and where that part starts: a quotation of the user's *question* (an injection tells the assistant what to
answer to "who sang it?"; a host has no reason to quote the question a user will ask), and a markup element
that opens there (an element is wrapped where its author chose; one a browser hides, `tags.opens_hidden`,
holds text meant for the model and not the reader). The boundary reads them in `splice` (where a block starts
and which claim is the writer's) and `premise` (how far back a set-up reading may look). How many of the
query's words make text "aimed" at it is also fixed here, once: bait runs, keyword salad and quotations share
the bar.
"""

from __future__ import annotations

import math
import re

from ragsec_core._util.text import tokenize
from ragsec_core.data.spans import Span, is_query_bait
from ragsec_core.data.tags import opens_element

BAIT_SHARE = 0.6  # aimed text holds at least this share of the query's distinct content words
# A quoted question, its inside as group 1. A quoted title holds the query's words too ('the song "It's my
# party and I cry if I want to"'), but not the question's mark.
_QUOTED = re.compile(r"[\"“]([^\"“”]{1,300}\?)[\"”]")


def authors_mark(text: str, sent: Span, query: str) -> bool:
    """The sentence opens a markup element (`tags.opens_element`: a hidden `<div>`, a comment) or quotes
    the user's question (`quotes_query`): either marks where its writer's text starts."""
    return opens_element(text[sent[0] : sent[1]]) or quotes_query(text, sent, query)


def quotes_query(text: str, sent: Span, query: str) -> bool:
    """The sentence quotes the user's question: a quotation that ends with its question mark, made mostly of
    the query's words and holding as many of them as a bait run ('the answer to "who sang it?" is'). A
    quoted title is a host's or a claim's, not the mark of a writer who aims at the question."""
    return any(is_query_bait(m.group(1), query) and aimed(set(tokenize(m.group(1))), query)
               for m in _QUOTED.finditer(text, *sent))


def aimed(words: set[str], query: str) -> bool:
    """Words aimed at the query (salad's, a quotation's): they hold `BAIT_SHARE` of its content words
    (`bait_need`)."""
    q = set(tokenize(query))
    return bool(q) and len(words & q) >= bait_need(q)


def bait_need(q: set[str]) -> int:
    """How many of the query's distinct content words aimed text holds: `BAIT_SHARE` of them, three at
    least (two words of a long query are a topic, not an aim)."""
    return min(len(q), max(3, math.ceil(BAIT_SHARE * len(q))))
