import json

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.corpus import Document, chunk_corpus, chunk_document, load_corpus, sample_corpus_names, variant_names

from .conftest import shared_data


def test_sample_corpora_are_large_and_labelled():
    assert {"general", "secops"} <= set(sample_corpus_names())
    for name in ("general", "secops"):
        corpus = load_corpus(name)
        assert len(corpus.documents) >= 150
        assert len({d.id for d in corpus.documents}) == len(corpus.documents)
        assert len(corpus.queries) >= 10
        for q in corpus.queries:
            assert any(q.answers[0].lower() in d.text.lower() for d in corpus.documents), q.id
        assert {"false_facts", "canary", "embedded", "multi"} <= set(variant_names(name))


@pytest.mark.parametrize("variant", ["false_facts", "canary", "embedded", "multi"])
def test_variants_carry_gold_spans_that_name_the_target(variant):
    clean = load_corpus("general")
    poisoned = load_corpus("general", variant)
    poisons = [d for d in poisoned.documents if d.poison_spans]
    assert poisons
    for d in poisons:
        assert any(d.poison_target.lower() in d.text[a:b].lower() for a, b in d.poison_spans)
    if variant == "embedded":  # embedded poison replaces its clean host, same id, corpus size unchanged
        assert len(poisoned.documents) == len(clean.documents)
        assert {d.id for d in poisons} <= {d.id for d in clean.documents}
    else:
        assert len(poisoned.documents) == len(clean.documents) + len(poisons)


def test_chunks_keep_exact_source_offsets_and_clip_gold_spans():
    text = " ".join(f"Sentence number {i} talks about rivers and mountains." for i in range(60))
    doc = Document("d1", text, "t", poison_spans=((500, 620),))
    chunks = chunk_document(doc, max_chars=300)
    assert len(chunks) > 3
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert len(c.text) <= 300
        for a, b in c.poison_spans:
            assert 0 <= a < b <= len(c.text)
            assert c.text[a:b] == text[c.start + a : c.start + b]
    covered = "".join(c.text[a:b] for c in chunks for a, b in c.poison_spans)
    assert covered.replace(" ", "") == text[500:620].replace(" ", "")  # only inter-chunk spaces are dropped
    # a single sentence longer than the budget is split, never lost
    long = Document("d2", "x" * 2500)
    assert "".join(c.text for c in chunk_document(long, max_chars=1000)) == "x" * 2500


def test_all_sample_chunks_round_trip():
    corpus = load_corpus("secops", "embedded")
    docs = {d.id: d for d in corpus.documents}
    for c in chunk_corpus(corpus):
        assert docs[c.doc_id].text[c.start : c.end] == c.text


def test_jsonl_csv_and_folder_loaders(tmp_path):
    jl = tmp_path / "c.jsonl"
    jl.write_text('{"id": "a", "text": "alpha text", "title": "A"}\n\n{"id": "a", "text": "dup id"}\n')
    docs = load_corpus(jl).documents
    assert [d.id for d in docs] == ["a", "a~1"]  # duplicate ids stay distinct
    csvf = tmp_path / "c.csv"
    csvf.write_text('id,title,text\n1,One,"first, with comma"\n2,Two,second\n')
    assert [d.text for d in load_corpus(csvf).documents] == ["first, with comma", "second"]
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("plain text note")
    (folder / "sub" / "b.md").write_text("# heading\nmarkdown note")
    (folder / "skip.bin").write_bytes(b"\x00\x01")
    assert sorted(d.id for d in load_corpus(folder).documents) == ["a.txt", "sub/b.md"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty"),
        (b"\n\n", "empty"),
        (b'{"id": 1}\n', "no string 'text'"),
        (b"not json\n", "invalid JSON"),
        (b"\xff\xfe\xfa bad bytes", "not valid UTF-8"),
        (b"abc\x00def", "binary"),
    ],
)
def test_bad_corpus_files_give_clear_errors(tmp_path, content, message):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(content)
    with pytest.raises(RagsecError, match=message):
        load_corpus(f)


def test_missing_corpus_and_unknown_variant():
    with pytest.raises(RagsecError, match="corpus not found"):
        load_corpus("/no/such/corpus.jsonl")
    with pytest.raises(RagsecError, match="unknown variant"):
        load_corpus("general", "nope")


def test_poisonedrag_json_loader_on_real_attack_data():
    path = shared_data("poisonedrag", "nq.json")
    corpus = load_corpus(path)
    raw = json.loads(path.read_text())
    assert len(corpus.queries) == len(raw) == 100
    poisons = [d for d in corpus.documents if d.poison_spans]
    assert len(poisons) == sum(len(r["adv_texts"]) for r in raw.values())
    first = next(iter(raw.values()))
    q = corpus.labels_for(first["question"])
    assert q is not None and q.target == first["incorrect answer"]


def test_stealthy_json_loader_adds_benign_context():
    corpus = load_corpus(shared_data("stealthy", "wiki_open_nq.json"))
    benign = [d for d in corpus.documents if not d.poison_spans]
    assert len(benign) >= 900 and all(d.text for d in benign[:50])
