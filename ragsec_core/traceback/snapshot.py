"""The substitution counterfactual: what an analyst's trusted snapshot of the corpus adds to Pass-1.

Deleting text undoes an event only where the poison is text that was added. A perturbed copy (GARAG's
typos inside the very sentence that states the answer) garbles text that must stay, and no deletion
brings the answer back. With a copy of the corpus from before the incident (a backup, the history of a
knowledge base), each used chunk is aligned with its document's trusted text and the regions that differ
are *reverted*, replaced by what the snapshot has there, instead of deleted. A document the snapshot
does not hold was added since: reverting it deletes it.

One replay with every change reverted tells whether the changes since the snapshot caused the event
(`Pass1._revert`); the snapshot, not the replay, says where each change starts and ends, so the report
is drawn from the changes (`boundary.reverted`): added text exactly, changed words as the sentences they
touch (`changed_sentences`, the unit RAGDefender's GARAG gold uses).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import takewhile

from ragsec_core.data.corpus import Corpus
from ragsec_core.data.spans import Span, sentence_spans, trim
from ragsec_core.data.trace import Trace

_WORD = re.compile(r"\S+\s*")  # a word with the whitespace after it, so that hunks keep their spacing
_ENDS = (".", "!", "?", '."', ".)", "?\"", "!\"")  # a word that ends a sentence


@dataclass(frozen=True)
class Hunk:
    """One change in a chunk: `local` is the chunk's changed text ([l, l) where the chunk lost text) and
    `trusted` what the snapshot has in its place ("" where the chunk's text was added)."""

    local: Span
    trusted: str


def diff_hunks(text: str, trusted: str, opens_document: bool = False, ends_document: bool = False) -> list[Hunk]:
    """Where `text` differs from the stretch of `trusted` it aligns with, word by word (a chunk is a piece of
    its document: the document's text before and after that piece is not a change). No word in common:
    the whole text is new. `opens_document`: the text is known to begin its document, so the trusted
    words before the first in common were cut from the document's start since (text lost at 0), not the
    document before the chunk; `ends_document` likewise for the trusted words after the last in common (text
    lost at the chunk's end)."""
    a, b = list(_WORD.finditer(text)), list(_WORD.finditer(trusted))
    aw, bw = [m.group().strip() for m in a], [m.group().strip() for m in b]
    blocks = [m for m in SequenceMatcher(None, aw, bw, autojunk=False).get_matching_blocks() if m.size]
    if not blocks:
        return [Hunk((0, len(text)), "")] if text.strip() else []
    # the trusted stretch: from the first to the last word in common, widened by as many words as the chunk
    # has before (after) them, so that a changed first (last) word reads as a substitution, not an addition
    lo = 0 if opens_document else blocks[0].b - min(blocks[0].a, blocks[0].b)
    tail = len(a) - blocks[-1].a - blocks[-1].size
    hi = len(b) if ends_document else blocks[-1].b + blocks[-1].size + min(tail, len(b) - blocks[-1].b - blocks[-1].size)
    out = []
    ops = SequenceMatcher(None, aw, bw[lo:hi], autojunk=False).get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        if tag == "delete":  # added words: where they sit is ambiguous when they repeat their neighbours
            i1, i2 = _slide(aw, i1, i2, ops[k - 1][1] if k else i1, ops[k + 1][2] if k + 1 < len(ops) else i2)
        start = a[i1].start() if i1 < len(a) else len(text)
        end = a[i2 - 1].end() if i2 > i1 else start
        was = trusted[b[lo + j1].start() : b[lo + j2 - 1].end()] if j2 > j1 else ""
        if end > start and was:  # a substitution keeps the chunk's own spacing after it
            changed = text[start:end]
            was = was.rstrip() + changed[len(changed.rstrip()):]
        elif start == len(text) and was and lo + j1 > 0:  # lost from the end: the snapshot's gap goes before it
            gap = b[lo + j1 - 1].group()
            was = (gap[len(gap.rstrip()):] or " ") + was.rstrip()
        out.append(_added(text, Hunk((start, end), was)))
    return out


def _common(a: str, b: str) -> int:
    """How many leading characters two strings share."""
    return sum(1 for _ in takewhile(lambda pair: pair[0] == pair[1], zip(a, b)))


def _added(text: str, hunk: Hunk) -> Hunk:
    """A substitution that is an addition glued to a word it does not change (text planted right after
    `impression."` with no space reads as the words `impression.In` ... `"[7]`): the added words alone, when
    the snapshot's text is all of the hunk's first and last characters and two or more words remain. A
    typo stays a changed word: it adds no whole words."""
    changed = text[hunk.local[0] : hunk.local[1]]
    if not hunk.trusted or len(hunk.trusted) >= len(changed):
        return hunk
    head = _common(changed, hunk.trusted)
    tail = _common(changed[head:][::-1], hunk.trusted[head:][::-1])
    if head + tail < len(hunk.trusted) or len(changed[head : len(changed) - tail].split()) < 2:
        return hunk
    return Hunk((hunk.local[0] + head, hunk.local[1] - tail), "")


def _slide(words: list[str], i1: int, i2: int, lo: int, hi: int) -> tuple[int, int]:
    """An added run of words `words[i1:i2]` that could equally sit anywhere in [lo, hi) (its first word repeats
    the word after it, or its last the word before): the position that starts and ends on sentence
    boundaries. "A. The claim. The host." made from "A. The host." diffs as "claim. The" as readily as "The
    claim."."""
    def fit(i: int) -> int:
        starts = i == 0 or words[i - 1].endswith(_ENDS)
        return int(starts) + int(words[i + i2 - i1 - 1].endswith(_ENDS))

    best = i1
    i = i1
    while i > lo and words[i - 1] == words[i + i2 - i1 - 1]:
        i -= 1
        best = i if fit(i) > fit(best) else best
    i = i1
    while i + i2 - i1 < hi and words[i] == words[i + i2 - i1]:
        i += 1
        best = i if fit(i) > fit(best) else best
    return best, best + i2 - i1


def changed_sentences(text: str, changes: list[Span]) -> list[Span]:
    """The sentences of `text` that the changes touch, one span per run of consecutive touched sentences (the
    space between two changed sentences lies inside the changed region). A zero-width change (lost text)
    touches the sentence it sits in, or the one it ends."""
    sents = sentence_spans(text, limit=len(text))
    touched = set()
    for change in changes:
        s, e = trim(text, change) if change[1] > change[0] else change
        for k, (a, b) in enumerate(sents):
            if (a < e and s < b) if e > s else a <= s <= b:
                touched.add(k)
    runs: list[Span] = []
    for k in sorted(touched):
        if runs and k - 1 in touched:
            runs[-1] = (runs[-1][0], sents[k][1])
        else:
            runs.append(sents[k])
    return runs


@dataclass
class Snapshot:
    """The analyst's trusted copy of the corpus: document id -> text, and the changes of each chunk."""

    name: str
    documents: dict[str, str]
    _memo: dict[tuple[str, str, bool, bool], list[Hunk]] = field(default_factory=dict, repr=False)
    _label: str = field(default="", repr=False)

    @classmethod
    def from_corpus(cls, corpus: Corpus) -> Snapshot:
        return cls(corpus.name, {d.id: d.text for d in corpus.documents})

    def label(self) -> str:
        """What an artifact records of the snapshot it was traced against: its name and a content hash
        (computed once: a benchmark traces many events against one snapshot)."""
        if not self._label:
            h = hashlib.sha256()
            for doc_id in sorted(self.documents):
                h.update(f"{doc_id}\0{self.documents[doc_id]}\0".encode())
            self._label = f"{self.name} (sha256 {h.hexdigest()[:16]}, {len(self.documents)} documents)"
        return self._label

    def hunks(self, trace: Trace, i: int) -> list[Hunk]:
        """Hit `i`'s changes since the snapshot (all of it when its document is not in the snapshot). A
        chunk that a Pass-0 run logged at offset 0 begins its document, and one it logged as the document's
        last (`ends_document`) ends it, so text cut from the document's start or end since shows
        (`diff_hunks`). An imported trace's offsets are not the deployment's (logged as 0), so there neither
        is assumed; a trace logged before `ends_document` was recorded leaves the end unassumed."""
        hit = trace.hits[i]
        pass0 = trace.origin.get("kind") != "import"
        opens, ends = pass0 and hit.source_start == 0, pass0 and hit.ends_document is True
        key = (hit.doc_id, hit.text, opens, ends)
        if key not in self._memo:
            self._memo[key] = diff_hunks(hit.text, self.documents.get(hit.doc_id, ""), opens, ends)
        return self._memo[key]
