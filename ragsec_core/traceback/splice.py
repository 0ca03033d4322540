"""The planted region around a claim: textual evidence of where inserted text starts and stops.

Planted text is contiguous and targets the query; the host it sits in was written for its own sake. A
query-targeted poison carries retrieval bait: a run of the query's own words, either as a sentence of
its own (PoisonedRAG's black-box form puts the question first), glued to the next sentence (an
optimised token prefix has no full stop), or glued to the host sentence before it when the insertion
left no space. The bait is found as a *run of words*, not as a sentence, so the boundary does not depend
on how the poison punctuates. Without bait, what is left is that planted text was written to stand alone:
its first sentence does not point back to text before it (`refers_back`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragsec_core._util.text import (
    AFTER_CLOSE,
    CLAUSE_OPENERS,
    REFERRING_OPENERS,
    STOPWORDS,
    tokenize,
    word_spans,
)
from ragsec_core.data.markup import closed_units, records, replies
from ragsec_core.data.quotes import quotations
from ragsec_core.data.spans import Span, find_ci, is_query_bait, query_share, sentence_spans
from ragsec_core.data.tags import element_end, opens_hidden
from ragsec_core.data.trace import contains_norm
from ragsec_core.traceback.marks import authors_mark, bait_need, quotes_query
from ragsec_core.traceback.salad import SALAD_REACH, glued_salad, is_word_salad, salad_after, salad_before, stuffed

LEAD_WORDS = 8  # a sentence opening with a bait run within this many words is bait
PREFIX_TAIL = 2  # words between a prefix run and the capitalised clause start it is glued to
BAIT_REACH = 5  # sentences before the claim within which bait opens the same planted block
STRONG_REACH = 2  # sentences a strong bait may lie behind a weak one
ANSWER_REACH = 3  # words between a restated query and the event string it asserts
# Block starts (`_bait_start`) that bear the writer's own mark: a quotation of the user's question, an
# element hidden from the reader. A claim under one is the writer's, not the host's.
MARKED_STARTS = ("quoted", "hidden")
# Block starts that show the claim was written for this query or for the model alone
TARGETED_STARTS = ("strong", "glued", *MARKED_STARTS)
# a sentence end, also before citation markers and editor's tags (".[18]", ".[citation needed]")
_SENTENCE_END = re.compile(r"[.!?:;]" + AFTER_CLOSE)
_GAP_END = re.compile(r"[.!?]")
LABEL_WORDS = 3  # words a heading label may have: "Q:", "User question:", "Summary of findings:", "[Image:"
_LABEL = re.compile(rf"[\[(]?\w+(?: \w+){{0,{LABEL_WORDS - 1}}}:")  # a heading label, in a bracket or not: "[Image:"
_SENTENCE_CUT = re.compile(r"(?<=[.!?])\s+(?=\S)")  # a one-line unit's sentences (a transcript's turns)


@dataclass(frozen=True)
class BaitRun:
    """A run of the query's words in the chunk: its characters."""

    start: int
    end: int


def bait_runs(text: str, query: str) -> list[BaitRun]:
    """Maximal runs of words inside one sentence whose content words come from the query (stopwords ride
    along, and up to one foreign word per query word, as an optimiser flips some), holding at least
    `marks.BAIT_SHARE` of the query's distinct content words (three at least)."""
    q = set(tokenize(query))
    if not q:
        return []
    need = bait_need(q)
    words = word_spans(text)
    runs: list[BaitRun] = []
    i = 0
    while i < len(words):
        if words[i][2] not in q:
            i += 1
            continue
        seen: set[str] = set()
        foreign, last = 0, i
        for j in range(i, len(words)):
            if j > i and _GAP_END.search(text[words[j - 1][1] : words[j][0]]):
                break  # a run stays inside one sentence
            w = words[j][2]
            if w in q:
                seen.add(w)
                last = j
            elif w not in STOPWORDS:
                foreign += 1
                if foreign > len(seen):
                    break
        if len(seen) >= need:
            runs.append(BaitRun(_run_start(text, words, i), words[last][1]))
        i = last + 1
    return runs


def _run_start(text: str, words: list[tuple[int, int, str]], i: int) -> int:
    """A run starts at its first query word, or at the stopwords just before it that belong to the same
    sentence ("a synonym for …" keeps its "a")."""
    k = i
    while k > 0 and words[k - 1][2] in STOPWORDS and not _GAP_END.search(text[words[k - 1][1] : words[k][0]]):
        k -= 1
    return words[k][0]


def region(text: str, seed: Span, anchor: str, query: str) -> Span:
    """The planted block around the claim. The claim sentence is the sentence of this chunk that states
    the event string as keyword stuffing aimed at the query (a salad sentence, or a salad run glued into a
    host sentence: then the run alone is the block), else the one that shares most words with the query (a
    benign host may name the answer too) among those under the writer's own mark if any (`MARKED_STARTS`:
    a host sentence may share more of the query's words than an injection cut after its quotation), else
    among those whose block opens on bait that leads in (`_led`: a long host sentence that names the answer
    before or after the planted block may share more of the query's words than the claim the bait leads
    to; a claim that its bait reaches only past a closed unit stating the answer is not under that bait).
    The block starts at the bait that opens the claim (`_bait_start`), else at the claim sentence itself:
    an earlier sentence that also states the event string is as often the host's own mention. It ends
    after the unbroken run of sentences from the claim on that state the event string, takes one sentence
    that mostly repeats the query or restates the claim (`_restates`), both stopped by a unit the writer
    closed (`markup.closed_units`: a JSON record, a table, code), and keyword salad on either
    side (`salad_after`, `salad_before`; past a closed unit only over the closed units after it,
    `_closed_reach`); a block that opens an element (a hidden one, a page's section)
    runs at least to where the element closes (`tags.element_end`). Without a sentence that states the
    event string, the block grows from the sentence that holds `seed` (the replay's causal span)."""
    sents = sentence_spans(text)
    texts = [text[a:b] for a, b in sents]
    claims = [k for k, t in enumerate(texts) if contains_norm(t, anchor)]
    own = [k for k, (a, b) in enumerate(sents) if a <= seed[0] < b]
    if not claims and not own:
        return seed
    glued = {k: run for k in claims if (run := glued_salad(text, sents[k], anchor, query)) is not None}
    stuffing = [k for k in claims if k in glued or (is_word_salad(texts[k]) and stuffed(texts, k, query))]
    runs, closed = bait_runs(text, query), closed_units(text)
    starts = {} if stuffing else {k: _bait_start(text, sents, k, query, runs) for k in claims}  # each claim's opening
    if stuffing:
        start = min(stuffing)
    elif claims:
        under = [k for k in claims if not any(j < k and sents[j] in closed and sents[j][1] > starts[k][0] for j in claims)]
        marked = [k for k in under if starts[k][1] in MARKED_STARTS]
        units = set(records(text))
        led = [k for k in under if _led(text, sents, units, runs, starts[k])]
        start = max(marked or led or claims,
                    key=lambda k: (query_share(_claim_piece(texts[k], anchor) if sents[k] in units else texts[k], query), -k))
    else:
        start = own[0]
    begin, kind = starts[start] if start in starts else _bait_start(text, sents, start, query, runs)
    if kind == "none":
        begin = sents[_antecedent(texts, start)][0]
    if start in glued:  # stuffing glued into a host sentence: the salad run is planted, not the sentence
        a, b = glued[start]
        first = salad_before(texts, start)
        return (sents[first][0] if first < start else begin if begin < sents[start][0] else a), b
    hi = start
    while hi + 1 in claims and sents[hi] not in closed:
        hi += 1
    if hi + 1 < len(sents) and sents[hi] not in closed and (is_query_bait(texts[hi + 1], query)
                                                           or _restates(text, sents[hi + 1], anchor, runs)):
        hi += 1
    hi = salad_after(texts, hi, reach=_closed_reach(sents, closed, hi))
    if (close := element_end(text, begin)) is not None:  # an element the block opens is all its writer's
        hi = max(hi, max(k for k, (a, _) in enumerate(sents) if a < close))
    at = next((k for k, (_, b) in enumerate(sents) if b > begin), start)
    first = salad_before(texts, at)
    return (sents[first][0] if first < at else begin, sents[hi][1])


def _closed_reach(sents: list[Span], closed: set[Span], hi: int) -> int:
    """How many sentences past the block's last one `salad_after` looks for stuffing: `SALAD_REACH`, but
    past a unit its writer closed only over the closed units right after it and one sentence more. Planted
    text is contiguous, and a writer's records may follow one another (a chat export's JSON lines), but
    the host's prose that runs on past a closed unit (its list's next items) is not reached across."""
    if sents[hi] not in closed:
        return SALAD_REACH
    k = hi + 1
    while k < len(sents) and sents[k] in closed:
        k += 1
    return min(SALAD_REACH, k - hi)


def _led(text: str, sents: list[Span], units: set[Span], runs: list[BaitRun], start: tuple[int, str]) -> bool:
    """The claim's block opens on bait that leads into the text after it: bait glued after a full stop or a
    colon; strong bait that is a question ("… on waivers?") or a structured unit (a section heading on its
    own line, a header block: `units`, `markup.records`); or a unit that opens the block (`_bait_start`'s
    "unit": a table, a header block) and holds a bait run. Keyword stuffing and keyword lists ("Stay nhl
    long player can.", "Index terms: long; nhl; …") lead nowhere: after a claim they end that claim's block
    (bait-noise, abstract), and the host sentence after them is not under bait."""
    offset, kind = start
    if kind == "glued":
        return True
    sent = next(((a, b) for a, b in sents if a <= offset < b), None)
    if sent is None:
        return False
    if kind == "unit":  # a unit start is a unit already: it leads in when it is bait
        return _holds_run(sent, runs)
    return kind == "strong" and (text[sent[0] : sent[1]].rstrip().endswith("?") or sent in units)


def _claim_piece(unit: str, anchor: str) -> str:
    """The line (of a unit of lines: a list, a table, a header block) or the sentence (of a transcript on one
    line) of a structured unit, one sentence of the split, that states `anchor`: the unit's claim, without
    its title and other items."""
    pieces = unit.split("\n") if "\n" in unit else _SENTENCE_CUT.split(unit)
    return next((p for p in pieces if contains_norm(p, anchor)), unit)


def marked_start(text: str, start: int, query: str) -> bool:
    """The block that starts at `start` opens on the attack's own mark, as `region` draws it: its first
    sentence is query bait or keyword salad, a bait run starts the block (glued), or the sentence opens
    with a prefix run (`_prefix_run`), or it bears its writer's mark (`authors_mark`: a markup element
    opens there, or it quotes the query), or it is a structured unit (`markup.records`) but a quoted mail
    under its attribution line (`markup.replies`: the reply's own lines stand above it), or a quotation
    starts there with its frame or an aside's bracket (`quotes.quotations`: "As X put it, \"…",
    "(Editor's note: …"). There the text says where the poison starts (`premise` asks the local LM only
    about blocks that open unmarked)."""
    sent = next(((start, b) for a, b in sentence_spans(text) if a <= start < b), None)
    if sent is None:
        return False
    first = text[sent[0] : sent[1]]
    runs = bait_runs(text, query)
    return (is_query_bait(first, query) or is_word_salad(first) or any(r.start == start for r in runs)
            or _prefix_run(text, sent, runs) or authors_mark(text, sent, query)
            or (sent in records(text) and sent not in replies(text)) or any(u == start for u, _ in quotations(text)))


def _antecedent(texts: list[str], k: int) -> int:
    """The sentence a block without bait starts at: planted text is written to stand alone, so while its first
    sentence (`k`) opens by pointing back (`refers_back`), the sentence before it belongs to it too, at most
    `BAIT_REACH` sentences back. Keyword salad before it is not what a sentence points to; whether it joins
    is `salad_before`'s call."""
    lo = k
    while lo > 0 and k - lo < BAIT_REACH and refers_back(texts[lo]) and not is_word_salad(texts[lo - 1]):
        lo -= 1
    return lo


def refers_back(sentence: str) -> bool:
    """The sentence opens with a word that points to text before it (`REFERRING_OPENERS`: "This waiver
    period …", "However, …", "Instead of …"), first or right after an opening adverb and its comma
    ("Typically, this is …"). Keyword salad has no grammar to point with."""
    if is_word_salad(sentence):
        return False
    words = word_spans(sentence)
    if not words:
        return False
    if words[0][2] in REFERRING_OPENERS:
        return True
    comma = len(words) > 1 and sentence[words[0][1] : words[1][0]].strip() == ","
    return comma and words[1][2] in REFERRING_OPENERS


def _restates(text: str, sent: Span, anchor: str, runs: list[BaitRun]) -> bool:
    """The sentence restates the claim: it holds a bait run (the query's words; `runs` are the chunk's
    `bait_runs`) and names the answer, or a word of it ("Contrary to popular belief, Freud … is considered
    the father of modern behaviorism")."""
    a, b = sent
    names = {w for w in tokenize(anchor) if len(w) > 2} & set(tokenize(text[a:b]))
    return bool(names) and _holds_run(sent, runs)


def _holds_run(sent: Span, runs: list[BaitRun]) -> bool:
    """A bait run starts inside the sentence: the question's words are there, whatever else it holds."""
    return any(sent[0] <= r.start < sent[1] for r in runs)


def _bait_start(text: str, sents: list[Span], lo: int, query: str, runs: list[BaitRun]) -> tuple[int, str]:
    """Where the block starts: the nearest sentence before the claim sentence `lo`, at most `BAIT_REACH`
    sentences back (a planted text is short: PoisonedRAG's run to about 30 words), that is bait, either
    mostly the query's words (strong, with the strong bait sentences right before it: the question and a
    restatement of it) or opening with a bait run within its first `LEAD_WORDS` words (weak: an optimised
    prefix may begin with flipped words). A weak start gives way to a strong one at most
    `STRONG_REACH` sentences further back (a setup sentence of the poison that opens with query words). A
    run that follows a full stop, colon or semicolon inside its sentence starts the block itself (the
    poison was glued to the host sentence before it). Without bait before it, a claim sentence that opens
    with a bait run is its own start (an optimised prefix glued to the claim). `runs` are the chunk's
    `bait_runs`. A claim sentence that opens with its own bait run is a weak start from the outset, so only
    strong bait within `STRONG_REACH` sentences before it takes its place. A sentence with the writer's own
    mark, the claim sentence included, ends the search: one that quotes the user's question
    (`marks.quotes_query`: bait further back is the host's, as in a passage on the song "Great Gig in the
    Sky?") or opens an element a browser hides (`tags.opens_hidden`); a structured unit right before the
    claim (`markup.records`: an e-mail's header block) is the claim's lead-in and starts the block, strong
    when it holds a bait run ("Subject: Re: <the question>"), and a claim that is itself a unit (a chat
    transcript, a list, a table, a log excerpt) starts its own block, also where bait sits glued inside it
    ("… ingest.worker[273]: resolving question: <the question>": the unit is one writer's; the start
    stays of kind glued), or at the unit right before it when that one holds a bait run (a heading that asks
    the question, above a LaTeX environment: strong). Returns the start and its kind (strong, glued,
    weak, none, unit, or a mark: quoted, hidden)."""
    units = records(text)
    own = _glued(text, sents[lo], runs)
    if own is not None:  # the claim sentence swallowed the end of its host sentence; a unit is all its writer's
        return (sents[lo][0] if sents[lo] in units else own), "glued"
    weak: tuple[int, int, str] | None = None  # (sentence, start offset, kind)
    for k in range(lo, max(-1, lo - 1 - BAIT_REACH), -1):
        if weak is not None and weak[0] - k > STRONG_REACH:
            break
        a, b = sents[k]
        if quotes_query(text, sents[k], query):
            return a, "quoted"  # the writer aims at the question here: bait further back is the host's
        if opens_hidden(text[a:b]):
            return a, "hidden"  # an element a browser hides: its text was written for the model alone
        if k == lo - 1 and sents[k] in units:  # the claim's own lead-in: a message's header block
            return a, "strong" if _holds_run(sents[k], runs) else "unit"
        if k == lo and sents[lo] in units:  # a unit's own start: bait further back is the host's
            if lo > 0 and _leads_with_bait(text, sents[lo - 1], a, units, runs):
                return sents[lo - 1][0], "strong"  # a section's heading that asks the question leads it in
            return a, "unit"
        if k == lo:  # a claim that opens with its own bait run is a weak start already
            if _prefix_run(text, sents[lo], runs):
                weak = (lo, a, "weak")
            continue
        if is_query_bait(text[a:b], query):
            while k > 0 and is_query_bait(text[sents[k - 1][0] : sents[k - 1][1]], query):
                k -= 1  # the bait sentences right before it belong to the same opening (question, restatement)
            glued = _glued(text, sents[k], runs)
            return (sents[k][0] if glued is None else glued), "strong"
        glued = _glued(text, sents[k], runs)
        if weak is None and (glued is not None or _prefix_run(text, sents[k], runs)):
            weak = (k, glued, "glued") if glued is not None else (k, a, "weak")
    if weak is not None:
        return weak[1], weak[2]
    return sents[lo][0], "none"


def _leads_with_bait(text: str, lead: Span, start: int, units: list[Span], runs: list[BaitRun]) -> bool:
    """`lead` is a unit that ends right before `start` (only spaces and line breaks between) and holds a bait
    run: a heading that asks the question (`\\paragraph{<question>?}` above an itemize environment)."""
    return lead in units and not text[lead[1] : start].strip() and _holds_run(lead, runs)


def _prefix_run(text: str, sent: Span, runs: list[BaitRun]) -> bool:
    """The sentence opens with a bait run (within its first `LEAD_WORDS` words) that is glued to a clause of
    its own with no full stop between them: the sentence was cut at a seam (`spans.sentence_spans`), or,
    past the run's first word and at most `PREFIX_TAIL` words after its end, a capitalised clause opener
    follows a word ("… usa earliest hiroshima In the history of warfare …", "… come out The Apple archive
    …"). That is an optimised prefix without punctuation; a host sentence that merely opens with the
    query's words has no such seam."""
    a, b = sent
    words = word_spans(text[a:b])
    for r in runs:
        if not (a <= r.start < b and len(word_spans(text[a : r.start])) < LEAD_WORDS):
            continue
        if not _SENTENCE_END.search(text[a:b]):
            return True
        inside = [i for i, w in enumerate(words) if w[0] > r.start - a]
        tail = [i for i in inside if words[i][0] >= r.end - a][:PREFIX_TAIL + 1]
        reach = [i for i in inside if words[i][0] < r.end - a] + tail
        if any(words[i][2] in CLAUSE_OPENERS and text[a + words[i][0]].isupper() and i + 1 < len(words) for i in reach):
            return True
    return False


def _glued(text: str, sent: Span, runs: list[BaitRun]) -> int | None:
    """The first bait run inside the sentence that follows a full stop, colon or semicolon there (no
    space after it, or a lower-case start the splitter did not take for a sentence). A label that opens
    the sentence and introduces the run ("Question: how many …", "Summary of findings: The …", `_LABEL`) is
    the run's own heading, not host text: a host clause before a colon runs longer than `LABEL_WORDS`."""
    a, b = sent
    start = next((r.start for r in runs if a < r.start < b and _SENTENCE_END.search(text[a : r.start].rstrip())), None)
    return a if start is not None and _LABEL.fullmatch(text[a:start].strip()) else start


def claim_span(text: str, anchor: str) -> Span | None:
    """The first sentence of `text` that states `anchor` on its own (a chunk's claim), or None."""
    return next(((a, b) for a, b in sentence_spans(text) if contains_norm(text[a:b], anchor)), None)


def query_targeted(text: str, anchor: str, query: str) -> bool:
    """The chunk states the event string as the answer to a restated query (a bait run within
    `ANSWER_REACH` words of the event string: "the capital of Australia is Sydney"), in a block that
    opens with strong or glued bait, in a structured unit that holds a bait run (a diff that adds the
    question and its answer: one writer's text, as `_led` reads it), or next to keyword stuffing made of
    the query's words (`stuffed`): the construction of a query-targeted poison, which a benign passage that
    happens to name the answer lacks."""
    sents = sentence_spans(text)
    texts = [text[a:b] for a, b in sents]
    runs = bait_runs(text, query)
    for k, (a, b) in enumerate(sents):
        if not contains_norm(texts[k], anchor):
            continue
        hits = find_ci(texts[k], anchor)
        if any(_words_between(text, r, (a + x, a + y)) <= ANSWER_REACH for r in runs if a <= r.start < b for x, y in hits):
            return True
        kind = _bait_start(text, sents, k, query, runs)[1]
        if kind in TARGETED_STARTS or (kind == "unit" and _holds_run((a, b), runs)) or stuffed(texts, k, query):
            return True
    return False


def _words_between(text: str, run: BaitRun, answer: Span) -> int:
    """Words between a bait run and an answer occurrence (either order; 0 when they touch or overlap)."""
    gap = text[run.end : answer[0]] if run.end <= answer[0] else text[answer[1] : run.start] if answer[1] <= run.start else ""
    return len(word_spans(gap))
