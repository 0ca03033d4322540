"""The stale snapshot of `bench traceback --snapshot-drift`: benign edits since the snapshot, drawn per document."""

import subprocess
import sys

import pytest

from ragsec_core.bench.drift import EDITS, analyst_snapshot, stale_snapshot
from ragsec_core.data.corpus import Corpus, Document, load_corpus
from ragsec_core.traceback.snapshot import Snapshot, diff_hunks

from .conftest import REPO


def test_each_edit_is_the_benign_change_it_names() -> None:
    """Diffed as Pass-1 diffs a chunk: `added` is one whole sentence the snapshot lacks, `reworded` one word with
    two letters swapped, `removed` one sentence of another document that the snapshot still has."""
    corpus = load_corpus("secops")
    snap, kinds = stale_snapshot(corpus, 0.9, seed=3)
    assert sum(kinds.values()) >= 3 and set(kinds) <= set(EDITS)
    seen = set()
    for doc in corpus.documents:
        old = snap.documents[doc.id]
        if old == doc.text:
            continue
        hunks = diff_hunks(doc.text, old)
        if not hunks:  # a sentence cut from the document's end: a chunk's alignment ends with its own text
            assert old.startswith(doc.text) and len(old) > len(doc.text)
            continue
        [hunk] = hunks
        new = doc.text[hunk.local[0] : hunk.local[1]]
        if hunk.trusted == "":  # a sentence added since
            seen.add("added")
            assert new.strip()[-1] in ".!?\"" and len(new.split()) >= 3
        elif hunk.local[0] == hunk.local[1]:  # a sentence removed since
            seen.add("removed")
            assert any(hunk.trusted.strip() in d.text for d in corpus.documents if d.id != doc.id)
        else:  # a typo fixed since
            seen.add("reworded")
            assert sorted(new.strip()) == sorted(hunk.trusted.strip()) and new.strip() != hunk.trusted.strip()
    assert seen == set(kinds)


def test_the_draw_depends_on_the_seed_and_the_document_alone() -> None:
    corpus = load_corpus("secops")
    a, _ = stale_snapshot(corpus, 0.5, seed=1)
    b, _ = stale_snapshot(Corpus("reordered", list(reversed(corpus.documents))), 0.5, seed=1)
    assert a.documents == b.documents
    assert stale_snapshot(corpus, 0.5, seed=2)[0].documents != a.documents
    one = Corpus("one", [Document("d", "A single sentence without company.")])  # no sentence to add or cut
    for seed in range(6):
        assert sorted(stale_snapshot(one, 0.99, seed)[0].documents["d"]) == sorted(one.documents[0].text)
    with pytest.raises(ValueError):
        stale_snapshot(corpus, 1.0, seed=0)


def test_the_benchmark_and_its_rerun_draw_one_snapshot() -> None:
    """`analyst_snapshot`, which both `bench traceback --snapshot` and `--rerun` call: without a drift the clean
    corpus under its own name (the label stored events carry), with one the stale copy and its edits."""
    corpus = load_corpus("secops")
    clean, none = analyst_snapshot(corpus, 0.0, seed=1)
    assert clean.label() == Snapshot.from_corpus(corpus).label() and not none
    stale, kinds = analyst_snapshot(corpus, 0.5, seed=1)
    assert stale.label() == stale_snapshot(corpus, 0.5, seed=1)[0].label() != clean.label() and sum(kinds.values()) > 0


def test_the_cli_refuses_a_drift_without_a_snapshot() -> None:
    bad = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "bench", "traceback", "--data", "x.json",
                          "--snapshot-drift", "0.2"], check=False, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and "--snapshot-drift needs --snapshot" in bad.stderr, bad.stderr[-1000:]
