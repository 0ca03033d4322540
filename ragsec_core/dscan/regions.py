"""Word-level regions inside the retrieved documents: the question's echo and the answer's own words.

Why: a passage that restates the question draws the answer's attention by word overlap alone (the
question-matched control), so document-level collapse cannot tell an FAQ page from a poison. What a
poison adds is a *claim*: words the question does not contain and the answer copies. Splitting each
document's attention mass into echo tokens (words of the question), answer tokens (words of this answer
that are not the question's) and the rest lets the claim features contrast collapse onto the claim with
collapse onto the echo. Words are those of `_util.text.tokenize` (lower-cased, stopwords dropped), so a
region is what BM25 and the monitor would call the same word.
"""

from __future__ import annotations

import re

import numpy as np

from ragsec_core._util.text import tokenize, word_spans
from ragsec_core.models.attention import PromptMap


def question_words(question: str) -> frozenset[str]:
    return frozenset(tokenize(question))


def answer_words(answer: str, question: str) -> frozenset[str]:
    """The answer's content words that the question does not already contain (the claim it copies)."""
    return frozenset(tokenize(answer)) - question_words(question)


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def _marked_chars(text: str, words: frozenset[str]) -> np.ndarray:
    marked = np.zeros(len(text), dtype=np.int64)
    for a, b, w in word_spans(text):
        if w in words:
            marked[a:b] = 1
    return marked


def _any_marked(marked: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per character range [start, end): does it hold a marked character? (one prefix sum for all ranges)"""
    covered = np.concatenate([[0], np.cumsum(marked)])
    return (covered[ends] - covered[starts]) > 0


def _tokens_touching(pmap: PromptMap, marked: np.ndarray) -> np.ndarray:
    starts = np.array([min(a, len(pmap.text)) for a, _ in pmap.offsets], dtype=np.int64)
    ends = np.array([min(b, len(pmap.text)) for _, b in pmap.offsets], dtype=np.int64)
    return _any_marked(marked, starts, ends)


def token_mask(pmap: PromptMap, words: frozenset[str]) -> np.ndarray:
    """Per prompt token: does it overlap one of `words` in the prompt text? (bool, length n_tokens)"""
    if not words or not pmap.text:
        return np.zeros(pmap.n_tokens, dtype=bool)
    return _tokens_touching(pmap, _marked_chars(pmap.text, words))


def sentence_mask(pmap: PromptMap, words: frozenset[str]) -> np.ndarray:
    """Per prompt token: does it lie in a sentence that contains one of `words`? The claim a poison makes
    is a sentence; its answer word alone is one or two tokens of it."""
    if not words or not pmap.text:
        return np.zeros(pmap.n_tokens, dtype=bool)
    spans = np.array([m.span() for m in _SENTENCE.finditer(pmap.text)], dtype=np.int64).reshape(-1, 2)
    stating = _any_marked(_marked_chars(pmap.text, words), spans[:, 0], spans[:, 1])
    sentences = np.zeros(len(pmap.text), dtype=np.int64)
    for a, b in spans[stating]:
        sentences[a:b] = 1
    return _tokens_touching(pmap, sentences)


def region_mass(rows: np.ndarray, pmap: PromptMap, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Attention mass (T, L, K) of head-averaged `rows` (T, L, P) on each document's masked tokens, and
    the number of masked tokens per document (K,)."""
    t, n_layers = rows.shape[0], rows.shape[1]
    mass = np.zeros((t, n_layers, len(pmap.doc_tokens)), dtype=np.float64)
    lengths = np.zeros(len(pmap.doc_tokens), dtype=np.int64)
    for k, idx in enumerate(pmap.doc_tokens):
        sel = idx[mask[idx]] if len(idx) else idx
        lengths[k] = len(sel)
        if len(sel):
            mass[:, :, k] = rows[:, :, sel].sum(-1)
    return mass, lengths
