"""Span algebra for Pass-1: masks, sentence split, attribution rule, span proposals, bisection.

All spans are half-open `(start, end)` character intervals. Pass-1 works in chunk-local coordinates
and converts to prompt-global ones with the Pass-0 offsets (`global = prompt_span.start + local`).
Nothing here calls a model: tests of masked replays are passed in as functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from ragsec_core._util.text import (
    CITATION_MARKER,
    CLAUSE_OPENERS,
    CONNECTIVES,
    DIGIT_WORDS,
    NOTE_MARK,
    NUMBER_WORDS,
    Span,
    tokenize,
)
from ragsec_core.data.glue import glued_ends
from ragsec_core.data.markup import records
from ragsec_core.data.tags import MARKUP, ROFF_MARK, TEX_MARK, blank, hidden_elements, markup_tags, with_markup

if TYPE_CHECKING:
    from spacy.language import Language


MIN_SENTENCE_CHARS = 8
MAX_SENTENCES = 50
PLACEHOLDER = "[removed]"
MASK_MODES = ("delete", "placeholder")  # cut the characters out, or put PLACEHOLDER in their place
DEFAULT_MASK_MODE = "delete"


# ---------------------------------------------------------------- basic algebra

def overlaps(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def merge(spans: Iterable[Span]) -> list[Span]:
    """Sorted union of spans (touching spans merge)."""
    out: list[Span] = []
    for s, e in sorted(x for x in spans if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def subtract(spans: Iterable[Span], holes: Iterable[Span]) -> list[Span]:
    """The parts of `spans` outside every hole (sorted, merged)."""
    out: list[Span] = []
    cut = merge(holes)
    for s, e in merge(spans):
        for hs, he in cut:
            if he <= s or hs >= e:
                continue
            if hs > s:
                out.append((s, hs))
            s = max(s, he)
        if s < e:
            out.append((s, e))
    return out


def length(spans: Iterable[Span]) -> int:
    return sum(e - s for s, e in merge(spans))


def apply_masks(text: str, masks: Iterable[Span], mode: str = "delete", subs: Mapping[Span, str] | None = None) -> str:
    """Remove (or replace with a neutral placeholder) every masked region of `text`. A mask listed in `subs`
    gets that text in its place instead (a substitution: the trusted snapshot's text for a changed region,
    `traceback.snapshot`; a zero-width one inserts); a plain mask over it wins, its region removed whole."""
    if mode not in MASK_MODES:
        raise ValueError(f"mask mode must be one of {MASK_MODES}")
    masks, subs = list(masks), subs or {}
    kept = set(masks) & subs.keys()
    plain = merge(m for m in masks if m not in kept)
    while clash := {m for m in kept if any((a < m[0] < b) if m[0] == m[1] else overlaps(m, (a, b)) for a, b in plain)}:
        kept -= clash
        plain = merge([*plain, *clash])
    edits = [(s, e, PLACEHOLDER if mode == "placeholder" else "") for s, e in plain]
    edits += [(s, e, subs[(s, e)]) for s, e in kept]
    out, pos = [], 0
    for s, e, repl in sorted(edits):
        if s < pos:  # two substitutions over one region: the first stands
            continue
        out += [text[pos:s], repl]
        pos = e
    out.append(text[pos:])
    return "".join(out)


def trim(text: str, span: Span) -> Span:
    """Shrink a span so it neither starts nor ends on whitespace."""
    s, e = span
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


# ---------------------------------------------------------------- sentences

@lru_cache(maxsize=1)
def _sentencizer() -> Language:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


# A sentence end followed by citation markers or editor's tags ("….[18] Next", "….[citation needed] (Editor's
# note: …"): spaCy's sentencizer does not always split there, which glues the first sentence of text planted
# after a Wikipedia citation to the host sentence.
_CITATION_END = re.compile(r"[.!?][\"'”’)]*(?:" + NOTE_MARK + r")+\s+(?=\S)")
# A seam: a capitalised clause opener followed by a lower-case word, right after a word with no full stop
# ("… sydney capital lIgHtHoUsE Its lantern was made …"): text without punctuation glued to a sentence.
# A title ("the film The Jungle Book") goes on capitalised, so it is not one.
# A connective adverb with its comma ("… the sperm's head Also, most …") is such an opener too; a stop word with
# one is not ("Xbox One, and …", "Fools Rush In, the …"). A clause's enumerator is no word ("…; and (b) On this
# day, …": the clause goes on).
_SEAM = re.compile(r"(?<=[\w)\]])(?<!\([a-z0-9]\))\s+(?=(?:(?:" + "|".join(sorted(w.capitalize() for w in CLAUSE_OPENERS)) + r")\s+[a-z]|(?:"
                   + "|".join(sorted(w.capitalize() for w in CONNECTIVES)) + r"),\s+[a-z]))")


# An automatic caption's sound tag ("[Music]", "[Applause]": one capitalised word in square brackets) after a
# word without a full stop, a capitalised word after it: the captions' words end there, whatever follows.
_SOUND_TAG = re.compile(r"(?<=[a-z0-9'’])\s+\[[A-Z][a-z]{2,15}\](?=\s+[A-Z])")


def sentence_spans(text: str, limit: int = MAX_SENTENCES) -> list[Span]:
    """spaCy's rule-based sentencizer (works offline), also split after citation markers, at seams, after
    a caption's sound tag and at a sentence end glued to what follows (`glue.glued_ends`), as
    trimmed spans; markup tags between sentences go with the sentence they open or close, an element a
    browser hides is cut from the visible text around it, and a JSON
    record or a markdown table is one sentence of its own (`data.markup.records`: spaCy reads neither).
    A fresh list each call (callers may change it) over one parse per text: the boundary's rules
    (`splice`, `misspelling`, `cohesion`) each split the same implicated chunk."""
    return list(_sentences(text)[:limit])


def sentence_texts(text: str) -> list[str]:
    """The stripped text's sentences as strings, all of them (no `MAX_SENTENCES` limit): what a form
    builder lays out one by one (as bullets, log lines, reference-marked sentences)."""
    text = text.strip()
    return [text[a:b] for a, b in sentence_spans(text, limit=len(text))]


@lru_cache(maxsize=512)
def _sentences(text: str) -> tuple[Span, ...]:
    units = records(text)
    tags = [t for t in markup_tags(text) if not any(a <= t[0] and t[1] <= b for a, b in units)]
    plain = blank(text, tags + units)  # same length: offsets stay the text's
    bounds = units + hidden_elements(text, tags)
    doc = _sentencizer()(plain)
    spans = []
    for sent in doc.sents:
        cuts = [sent.start_char] + sorted(
            [m.end() for m in _CITATION_END.finditer(plain, sent.start_char, sent.end_char)]
            + [m.end() for m in _SEAM.finditer(plain, sent.start_char, sent.end_char)]
            + [m.end() for m in _SOUND_TAG.finditer(plain, sent.start_char, sent.end_char)]
            + [x for x in glued_ends(text) if sent.start_char < x < sent.end_char]  # a sentence end glued on
            + [x for u in bounds for x in u if sent.start_char < x < sent.end_char])  # a unit or hidden text inside it
        spans += [trim(plain, (a, b)) for a, b in zip(cuts, cuts[1:] + [sent.end_char])]
    return with_markup(text, sorted(_openers_forward(plain, sorted(s for s in spans if s[1] > s[0])) + units), tags)


# An opening bracket or quote at a sentence's end, after a space: spaCy leaves it there ('… credits. "' then
# 'I Wan'na Be Like You" is a song …', '… this one? [' then '09:16] tenpenny: …'); it opens the next sentence.
# So does a section sign ('… in 1871. §' then '7.5 Fees. (a) …').
_OPENER_END = re.compile(r"\s([\[(“\"§]+)$")


def _openers_forward(text: str, spans: list[Span]) -> list[Span]:
    """The sentences with each opening bracket or quote left at a sentence's end given to the next one."""
    out = list(spans)
    for i in range(len(out) - 1):
        m = _OPENER_END.search(text, out[i][0], out[i][1])
        if m is not None and m.start() > out[i][0]:
            out[i] = trim(text, (out[i][0], m.start()))
            out[i + 1] = (m.start(1), out[i + 1][1])
    return out


def rank_sentences(text: str, answer: str, masked: Sequence[Span] = ()) -> list[Span]:
    """Sentence candidates: drop short ones and those overlapping earlier masks; order by
    (contains the answer, longer, earlier), as RAGCharacter's sentence-first refinement does."""
    cands = [
        s for s in sentence_spans(text)
        if s[1] - s[0] >= MIN_SENTENCE_CHARS and not any(overlaps(s, m) for m in masked)
    ]
    return sorted(cands, key=lambda s: (not contains_ci(text[s[0] : s[1]], answer), -(s[1] - s[0]), s[0]))


# ---------------------------------------------------------------- answer anchoring

def contains_ci(text: str, needle: str) -> bool:
    return bool(needle.strip()) and needle.strip().lower() in text.lower()


def find_ci(text: str, needle: str) -> list[Span]:
    """Case-insensitive occurrences of `needle` as whole words ("\\fB" of roff glued before one is no
    letter of it): '5' is not found inside '2015', nor in a
    citation marker '[5]'. A small number matches in digits or in words ('2' finds "two seasons"), as
    `trace.normalize` reads them, so every rule that finds an answer agrees with the rule that decided
    the text holds it."""
    n = needle.strip()
    if not n:
        return []
    pattern = (_WORD_START if n[0].isalnum() else "") + _number_twins(n) + ("(?!\\w)" if n[-1].isalnum() else "")
    cited = [m.span() for m in re.finditer(CITATION_MARKER, text)]
    return [(m.start(), m.end()) for m in re.finditer(pattern, text, flags=re.IGNORECASE)
            if not any(a <= m.start() and m.end() <= b for a, b in cited)]


# Where a word starts: after no word character, or right after a roff font change glued to it ("\\fBAdam").
_WORD_START = r"(?:(?<!\w)|(?<=\\f[BIRP1-4])|(?<=\\f\([A-Z]{2}))"


def _number_twins(needle: str) -> str:
    """A regex for `needle` in which each whole-word small number also matches its twin (digits, word)."""
    out = []
    for piece in re.split(r"(\w+)", needle):
        twin = NUMBER_WORDS.get(piece.lower()) or DIGIT_WORDS.get(piece)
        out.append(f"(?:{re.escape(piece)}|{twin})" if twin else re.escape(piece))
    return "".join(out)


# Reference marks and editor's tags state nothing: they are no words of the sentence they close
_NOTES = re.compile(NOTE_MARK)


def query_share(sentence: str, query: str) -> float:
    """Share of the sentence's content words that come from the query. A reference mark ("[17]") is no word
    of it: a planted sentence that copies the host's citation style is as much bait as without the mark;
    nor is a markup tag (`<h3>`, `<section class="faq">`) or a LaTeX command (`\\subsection*`, a label's
    key) or a roff font change: a question in a page's source is as much bait as the question on the page."""
    words = tokenize(TEX_MARK.sub(" ", ROFF_MARK.sub(" ", MARKUP.sub(" ", _NOTES.sub(" ", sentence)))))
    q = set(tokenize(query))
    return sum(w in q for w in words) / len(words) if words else 0.0


def is_query_bait(sentence: str, query: str, share: float = 0.6) -> bool:
    """True when most of the sentence's content words come from the query (the retrieval bait that
    query-targeted poisons carry)."""
    return query_share(sentence, query) >= share


_CAP_PHRASE = re.compile(r"[A-Z0-9][\w'’.-]*(?:\s+[A-Z0-9][\w'’.-]*){0,5}")
_TOKEN = re.compile(r"\S+")


def attribution_span(chunk: str, answer: str) -> Span | None:
    """The deterministic attribution rule: exact case-insensitive answer match, else the leading
    capitalised phrase (1-6 words) of the answer found in the chunk, else its first non-space token."""
    hits = anchor_spans(chunk, answer)
    return hits[0] if hits else None


def anchor_spans(chunk: str, answer: str) -> list[Span]:
    """Every occurrence in `chunk` of what `attribution_span` matches first (the answer, else its leading
    capitalised phrase, else its first token), in text order: a chunk that states the answer twice still
    states it when its first occurrence is masked."""
    for key in _anchor_keys(answer):
        hits = find_ci(chunk, key)
        if hits:
            return hits
    return []


def _anchor_keys(answer: str) -> list[str]:
    """What `anchor_spans` looks for, in order: the answer, its leading capitalised phrase, its first token."""
    keys = [answer]
    phrase = _CAP_PHRASE.search(answer)
    if phrase:
        keys.append(phrase.group(0).rstrip(".,;:"))
    token = _TOKEN.search(answer)
    if token:
        keys.append(token.group(0).strip(".,;:!?\"'"))
    return keys


_CLAUSE_BREAK = re.compile(r"[,;:()\u2014]|\s-\s|\band\b|\bbut\b|\bwhich\b")


def clause_spans(text: str, region: Span) -> list[Span]:
    """Clauses of a region, split at commas, semicolons, colons, dashes and a few conjunctions."""
    s0, e0 = region
    cuts = [s0] + [s0 + m.start() for m in _CLAUSE_BREAK.finditer(text[s0:e0])] + [e0]
    spans = [trim(text, (a, b)) for a, b in zip(cuts, cuts[1:])]
    return [s for s in spans if s[1] - s[0] >= 4]


def candidate_spans(
    chunk: str,
    answer: str,
    regions: Sequence[Span] = (),
    masked: Sequence[Span] = (),
    limit: int = 12,
) -> list[Span]:
    """CandidateSpansForChunk: event-conditioned proposals, answer-bearing ones first.

    Proposals are answer occurrences, the clause and sentence around each, then clauses and halves of
    the retained sentence regions. When regions are given, proposals inside them are preferred as long
    as at least one exists."""
    sentences = sentence_spans(chunk) or [trim(chunk, (0, len(chunk)))]
    props: list[Span] = []
    for a in find_ci(chunk, answer):
        sent = next((s for s in sentences if s[0] <= a[0] < s[1]), a)
        clause = next((c for c in clause_spans(chunk, sent) if c[0] <= a[0] and a[1] <= c[1]), sent)
        props += [a, clause, sent]
    for r in list(regions) or sentences[:5]:
        props += clause_spans(chunk, r)
        mid = _word_cut(chunk, r)
        if mid:
            props += [(r[0], mid), (mid, r[1])]
        props.append(r)
    seen: set[Span] = set()
    out = []
    for p in (trim(chunk, p) for p in props):
        if p[1] - p[0] >= 4 and p not in seen and not any(overlaps(p, m) for m in masked):
            seen.add(p)
            out.append(p)
    if regions:
        inside = [p for p in out if any(r[0] <= p[0] and p[1] <= r[1] for r in regions)]
        out = inside or out
    answer_first = sorted(out, key=lambda p: (not contains_ci(chunk[p[0] : p[1]], answer), p[1] - p[0]))
    return answer_first[:limit]


def _word_cut(text: str, span: Span) -> int | None:
    """A whitespace position near the middle of the span, or None if the span is one word."""
    s, e = span
    mid = (s + e) // 2
    spaces = [i for i in range(s + 1, e - 1) if text[i].isspace()]
    return min(spaces, key=lambda i: abs(i - mid)) if spaces else None


# ---------------------------------------------------------------- bisection

def bisect_minimal(
    text: str,
    span: Span,
    better: Callable[[Span], bool],
    max_steps: int = 6,
    min_len: int = 4,
) -> tuple[Span, int]:
    """BisectMinimalSpan: halve the span while one half alone still does the job (`better(half)`),
    preferring the left half on ties; never below `min_len` chars. Returns (span, steps taken)."""
    steps = 0
    for _ in range(max_steps):
        if span[1] - span[0] <= min_len:
            break
        cut = _word_cut(text, span) or (span[0] + span[1]) // 2
        halves = [trim(text, (span[0], cut)), trim(text, (cut, span[1]))]
        halves = [h for h in halves if h[1] - h[0] >= min_len]
        steps += 1
        winner = next((h for h in sorted(halves, key=lambda h: h[1] - h[0]) if better(h)), None)
        if winner is None:
            break
        span = winner
    return span, steps
