"""A stale snapshot for `bench traceback --snapshot --snapshot-drift RATE`.

An analyst's backup is older than the incident: besides the poison, the corpus has had ordinary edits since
(a sentence added, a typo fixed, a sentence removed). With the clean corpus itself as the snapshot, the
revert and the gold replay are one counterfactual; here the snapshot holds an *older* version of a seeded
fraction of the clean documents, so every revert also undoes benign edits, and the benchmark measures what
Pass-1 reports of them (Char FPR) and what they cost. The planted corpus, the events and the gold stay
those of a run without drift: only what Pass-1 reverts to changes.

Each document's draw depends on the seed and its id alone, so a run split or resumed draws the same snapshot.
The edits are harmless: sentences of the corpus itself and a transposed pair of letters.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from ragsec_core.data.corpus import Corpus
from ragsec_core.data.spans import sentence_spans
from ragsec_core.traceback.snapshot import Snapshot

EDITS = ("added", "reworded", "removed")  # what happened to a document since the snapshot
_LONG_WORD = re.compile(r"\b[a-z]{6,}\b")


def analyst_snapshot(clean: Corpus, rate: float, seed: int) -> tuple[Snapshot, Counter[str]]:
    """The snapshot Pass-1 reverts to in a benchmark run with `--snapshot`: the clean corpus, or with a drift
    `rate` its stale copy (`stale_snapshot`), and the edits made since. `bench traceback` and its `--rerun`
    both draw it here, so a re-run reverts to the snapshot its events were traced against."""
    return stale_snapshot(clean, rate, seed) if rate else (Snapshot.from_corpus(clean), Counter())


def stale_snapshot(clean: Corpus, rate: float, seed: int) -> tuple[Snapshot, Counter[str]]:
    """The snapshot an analyst would hold if a `rate` fraction of the clean documents had been edited since it
    was taken, and how many documents each kind of edit touched (the kinds a document cannot take, such as
    removing a sentence from a one-sentence passage, leave it as it is)."""
    if not 0.0 <= rate < 1.0:
        raise ValueError("the drift rate must be in [0, 1)")
    documents = {d.id: d.text for d in clean.documents}
    donors = [d.text for d in sorted(clean.documents, key=lambda d: d.id)]  # not the listing order
    kinds: Counter[str] = Counter()
    for doc in clean.documents:
        rng = random.Random(f"{seed}:{doc.id}")
        if rng.random() >= rate:
            continue
        kind = rng.choice(EDITS)
        older = _older(doc.text, kind, rng, donors)
        if older != doc.text:
            documents[doc.id] = older
            kinds[kind] += 1
    return Snapshot(f"{clean.name} (stale: {rate:g} of documents edited since)", documents), kinds


def _older(text: str, kind: str, rng: random.Random, donors: list[str]) -> str:
    """The document as the snapshot has it, `kind` being what happened to it since: `added` (the snapshot
    lacks one of its sentences), `reworded` (the snapshot has a typo fixed since: two letters of a long word
    swapped), `removed` (the snapshot has a sentence of another document that was cut since)."""
    sents = sentence_spans(text, limit=len(text))
    if kind == "added" and len(sents) >= 2:
        a, b = rng.choice(sents)
        return (text[:a] + text[b:].lstrip()).rstrip()
    if kind == "reworded":
        words = list(_LONG_WORD.finditer(text))
        if not words:
            return text
        m = rng.choice(words)
        w = m.group()
        i = rng.choice([j for j in range(1, len(w) - 2) if w[j] != w[j + 1]] or [1])
        return text[: m.start()] + w[:i] + w[i + 1] + w[i] + w[i + 2 :] + text[m.end() :]
    if kind == "removed" and sents:
        donor = rng.choice(donors)
        extra = next((donor[a:b] for a, b in sentence_spans(donor, limit=1)), "")
        at = rng.choice([a for a, _ in sents[1:]] + [len(text)])
        return (text[:at].rstrip() + " " + extra + " " + text[at:].lstrip()).rstrip() if extra and donor != text else text
    return text
