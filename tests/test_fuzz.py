"""Property-based fuzzing (hypothesis) of everything that maps coordinates or reads outside input.

Traceback results are only as good as their coordinates: a span that drifts by one character blames the
wrong text. So the span algebra, the chunker's source offsets and the chunk <-> prompt maps are checked
against their invariants on generated inputs; the loaders and input checks must never crash (a clear
`RagsecError` is the only allowed failure). `CASES` counts what ran; the module totals > 10,000.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import string
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import check_params, check_query, check_upload
from ragsec_core._util.text import NUMBER_WORDS, escape_controls, html_visible, is_hidden
from ragsec_core.data import spans as S
from ragsec_core.data.corpus import Document, chunk_document, load_corpus
from ragsec_core.data.trace import TraceStore
from ragsec_core.rag import render_prompt

pytestmark = pytest.mark.slow
CASES: Counter[str] = Counter()
FAST = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))


def cases(n: int) -> settings:
    return settings(FAST, max_examples=n)


# Text with the characters that break naive code: sentence ends, whitespace of all kinds, markup,
# invisible and bidi controls, astral characters, template tokens.
ALPHABET = st.sampled_from(list(string.ascii_letters + string.digits + " .!?,;:()-'\"\n\t\r[]<>|/")
                           + ["\u200b", "\u202e", "\u2028", "\u00a0", "\u3000", "\U0001f600", "\U000e0041", "é", "\x00", "\x1b"])
TEXT = st.text(ALPHABET, max_size=300) | st.text(max_size=120)
SPECIALS = st.sampled_from(["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "[1] ", "Question: "])
HOSTILE_TEXT = st.lists(TEXT | SPECIALS, max_size=6).map("".join)


@st.composite
def text_and_spans(draw, max_spans: int = 6):  # type: ignore[no-untyped-def]
    text = draw(TEXT)
    n = len(text)
    pairs = draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=max_spans))
    return text, [(min(a, b), max(a, b)) for a, b in pairs]


def covered(spans) -> set[int]:  # type: ignore[no-untyped-def]
    return {i for s, e in spans for i in range(s, e)}


# ---------------------------------------------------------------- span algebra

@cases(1700)
@given(text_and_spans(max_spans=8))
def test_merge_and_masks(ts):  # type: ignore[no-untyped-def]
    CASES["merge/apply_masks"] += 1
    text, spans = ts
    merged = S.merge(spans)
    assert all(s < e for s, e in merged)
    assert all(a[1] < b[0] for a, b in zip(merged, merged[1:]))  # sorted, disjoint, not touching
    assert covered(merged) == covered(spans) and S.length(spans) == len(covered(spans))
    kept = "".join(ch for i, ch in enumerate(text) if i not in covered(spans))
    assert S.apply_masks(text, spans) == kept
    assert S.apply_masks(text, []) == text
    placeholder = S.apply_masks(text, spans, "placeholder")
    assert len(placeholder) == len(kept) + len(merged) * len(S.PLACEHOLDER)
    for m in merged[:2]:  # unmasking one span restores exactly its characters, in place
        rest = [x for x in merged if x != m]
        unmasked = S.apply_masks(text, rest)
        before = len(S.apply_masks(text[: m[0]], [x for x in rest if x[1] <= m[0]]))
        assert unmasked[before : before + m[1] - m[0]] == text[m[0] : m[1]]


@cases(800)
@given(text_and_spans(max_spans=1))
def test_trim_stays_inside_and_strips(ts):  # type: ignore[no-untyped-def]
    CASES["trim"] += 1
    text, spans = ts
    span = spans[0] if spans else (0, len(text))
    s, e = S.trim(text, span)
    assert span[0] <= s <= e <= span[1]
    if e > s:
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert text[span[0] : s].isspace() or s == span[0]
    else:
        assert text[span[0] : span[1]].strip() == "" or span[0] == span[1]


@cases(700)
@given(TEXT)
def test_sentence_split_gives_ordered_trimmed_spans(text):  # type: ignore[no-untyped-def]
    CASES["sentence_spans"] += 1
    sents = S.sentence_spans(text)
    assert len(sents) <= S.MAX_SENTENCES
    for s, e in sents:
        assert 0 <= s < e <= len(text) and S.trim(text, (s, e)) == (s, e)
    assert all(a[1] <= b[0] for a, b in zip(sents, sents[1:]))


@cases(1000)
@given(TEXT, st.text(ALPHABET, min_size=1, max_size=4), st.integers(1, 12), st.integers(0, 8))
def test_bisect_keeps_the_needle_and_stays_inside(text, needle, min_len, max_steps):  # type: ignore[no-untyped-def]
    CASES["bisect_minimal"] += 1
    start = len(text)
    text = text + needle + text[::-1]
    span = (0, len(text))
    found, steps = S.bisect_minimal(text, span, lambda h: needle in text[h[0] : h[1]], max_steps, min_len)
    assert 0 <= found[0] <= found[1] <= len(text) and steps <= max_steps
    assert needle in text[found[0] : found[1]] and text.find(needle) <= start


_NUMBER_WORD = re.compile("|".join(sorted(NUMBER_WORDS, key=len, reverse=True)), re.IGNORECASE)


def _digits(text: str) -> str:
    """`text` with each small number word as its digits ("two" -> "2"), the twins `find_ci` equates; inside
    words too, since the answer's capitalised phrase may start inside one ("xTwo")."""
    return _NUMBER_WORD.sub(lambda m: NUMBER_WORDS[m.group().lower()], text)


@cases(700)
@given(TEXT, TEXT, text_and_spans(max_spans=3))
def test_candidates_and_attribution_stay_in_the_chunk(chunk, answer, masked):  # type: ignore[no-untyped-def]
    CASES["candidate_spans/attribution"] += 1
    masks = [m for m in masked[1] if m[1] <= len(chunk)]
    props = S.candidate_spans(chunk, answer, masked=masks)
    assert len(props) == len(set(props)) <= 12
    for s, e in props:
        assert 0 <= s < e <= len(chunk) and e - s >= 4 and S.trim(chunk, (s, e)) == (s, e)
        assert not any(S.overlaps((s, e), m) for m in masks)
    a = S.attribution_span(chunk, answer)
    if a is not None:
        assert 0 <= a[0] < a[1] <= len(chunk)
        # case-insensitive as the rule's regex is (simple case folding: "İ" matches "I", whose str.lower() differ),
        # and a small number's twin ("two" for "2") counts as the answer, as find_ci reads it
        piece = chunk[a[0] : a[1]]
        assert any(re.search(re.escape(_digits(p)), _digits(answer), re.IGNORECASE)
                   for p in (piece, piece.strip(".,;:!?\"'")) if p)


# ---------------------------------------------------------------- chunker and chunk <-> prompt maps

@cases(1500)
@given(TEXT | st.text(st.sampled_from("ab .\n"), max_size=3000), st.integers(5, 400), text_and_spans(max_spans=3))
def test_chunks_keep_source_offsets_and_lose_nothing(text, max_chars, gold):  # type: ignore[no-untyped-def]
    CASES["chunker"] += 1
    spans = tuple((s, e) for s, e in gold[1] if e <= len(text) and s < e)
    chunks = chunk_document(Document("d", text, poison_spans=spans), max_chars)
    for c in chunks:
        assert text[c.start : c.end] == c.text and 0 < len(c.text) <= max_chars and c.text == c.text.strip()
        assert all(0 <= a < b <= len(c.text) for a, b in c.poison_spans)
    assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))
    kept = covered((c.start, c.end) for c in chunks)
    assert all(text[i].isspace() for i in range(len(text)) if i not in kept)  # only whitespace dropped
    gold_chars = covered(spans) - {i for i in covered(spans) if text[i].isspace()}
    assert gold_chars <= covered((c.start + a, c.start + b) for c in chunks for a, b in c.poison_spans)


@pytest.fixture(scope="module")
def tokenizer_llm(llm):  # type: ignore[no-untyped-def]
    return llm


@st.composite
def prompt_case(draw):  # type: ignore[no-untyped-def]
    texts = draw(st.lists(HOSTILE_TEXT, min_size=1, max_size=4))
    j = draw(st.integers(0, len(texts) - 1))
    n = len(texts[j])
    masks = draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=3))
    return draw(HOSTILE_TEXT), texts, j, [(min(a, b), max(a, b)) for a, b in masks]


def test_prompt_maps_and_injection_guard(tokenizer_llm):  # type: ignore[no-untyped-def]
    llm = tokenizer_llm
    special = set(llm.tokenizer.all_special_ids)

    @cases(600)
    @given(prompt_case(), st.sampled_from(S.MASK_MODES))
    def check(case, mode):  # type: ignore[no-untyped-def]
        CASES["prompt maps/encode"] += 1
        query, texts, j, local = case
        r = render_prompt(llm, query, texts)
        assert [r.prompt[a:e] for a, e in r.spans] == texts
        assert all(x[1] <= y[0] for x, y in zip(r.spans, r.spans[1:]))
        a = r.spans[j][0]
        glob = [(a + s, a + e) for s, e in local]  # chunk-local -> prompt-global
        assert [r.prompt[gs:ge] for gs, ge in glob] == [texts[j][s:e] for s, e in local]
        back = [(max(gs, a) - a, min(ge, r.spans[j][1]) - a) for gs, ge in glob]  # global -> local
        assert back == local
        masked_texts = [S.apply_masks(t, local, mode) if i == j else t for i, t in enumerate(texts)]
        assert S.apply_masks(r.prompt, glob, mode) == render_prompt(llm, query, masked_texts).prompt
        ids, offsets = llm.encode_with_offsets(r.prompt)
        u0, u1 = llm.untrusted_region(r.prompt)
        assert u0 <= r.spans[0][0] and r.spans[-1][1] <= u1
        assert not [i for i, (s, e) in zip(ids, offsets) if i in special and u0 <= s and e <= u1]
        assert all(0 <= s <= e <= len(r.prompt) for s, e in offsets)
        assert all(x[0] <= y[0] for x, y in zip(offsets, offsets[1:]))
        assert sum(i in special for i in ids) == 5  # the template's own turn markers, nothing more

    check()


# ---------------------------------------------------------------- loaders and inputs never crash

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["id", "text", "title", "poison", "spans", "target", "question", "adv_texts", "context",
         "correct answer", "incorrect answer", "contents", "_id"]) | TEXT, inner, max_size=5),
    max_leaves=12,
)


@st.composite
def corpus_file(draw):  # type: ignore[no-untyped-def]
    suffix = draw(st.sampled_from([".jsonl", ".csv", ".json", ".txt"]))
    kind = draw(st.sampled_from(["bytes", "json", "jsonl", "csv"]))
    if kind == "bytes":
        data = draw(st.binary(max_size=400))
    elif kind == "json":
        data = json.dumps(draw(JSONISH)).encode()
    elif kind == "jsonl":
        data = "\n".join(json.dumps(r, ensure_ascii=draw(st.booleans())) for r in draw(st.lists(JSONISH, max_size=4))).encode(
            "utf-8", "surrogatepass")
    else:
        rows = draw(st.lists(st.lists(TEXT, max_size=4), max_size=4))
        data = "\n".join(",".join(r) for r in [["id", "text"]] + rows).encode("utf-8", "surrogatepass")
    return suffix, data


def test_loaders_never_crash(tmp_path_factory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("fuzz-corpora")

    @cases(1300)
    @given(corpus_file())
    def check(f):  # type: ignore[no-untyped-def]
        CASES["corpus loaders"] += 1
        suffix, data = f
        path = folder / f"c{suffix}"
        if suffix == ".txt":
            path = folder / "txt"
            path.mkdir(exist_ok=True)
            (path / "a.txt").write_bytes(data)
        else:
            path.write_bytes(data)
        try:
            corpus = load_corpus(path)
        except RagsecError as exc:
            assert str(exc).strip() and "Traceback" not in str(exc)
            return
        ids = [d.id for d in corpus.documents]
        assert len(ids) == len(set(ids))
        for d in corpus.documents:
            (d.id + d.title + d.text).encode("utf-8")  # no lone surrogates survive loading
            for c in chunk_document(d):
                assert d.text[c.start : c.end] == c.text

    check()


def test_trace_store_reads_any_file(tmp_path_factory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("fuzz-store") / "t.jsonl"

    @cases(500)
    @given(st.binary(max_size=300) | st.lists(JSONISH, max_size=4).map(lambda rs: "\n".join(map(json.dumps, rs)).encode()),
           st.text(max_size=20))
    def check(data, trace_id):  # type: ignore[no-untyped-def]
        CASES["trace store"] += 1
        path.write_bytes(data)
        store = TraceStore(path)
        assert all(isinstance(r, dict) for r in store.records())
        with contextlib.suppress(RagsecError):
            store.get(trace_id)

    check()


ANY = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=2100) | st.lists(st.integers(), max_size=2)


@cases(1200)
@given(ANY | TEXT | HOSTILE_TEXT | st.text(min_size=1990, max_size=2010), ANY, ANY, ANY, ANY)
def test_input_checks_never_crash(query, k, alpha, name, size):  # type: ignore[no-untyped-def]
    CASES["input checks"] += 1
    for call in (lambda: check_query(query), lambda: check_params(k, alpha), lambda: check_upload(name, size)):
        try:
            out = call()
        except RagsecError:
            continue
        if isinstance(out, str) and call is not None:
            out.encode("utf-8")
    try:
        safe = check_upload(name, size)
    except RagsecError:
        return
    assert "/" not in safe and "\\" not in safe and not safe.startswith(".") and re.fullmatch(r"[\w.-]+", safe)


BADGE = re.compile(r'<span class="hidden-char" title="invisible character">\[U\+([0-9A-F]{4,6})\]</span>')


@cases(1000)
@given(HOSTILE_TEXT)
def test_display_escaping_round_trips(text):  # type: ignore[no-untyped-def]
    CASES["escape_controls/html_visible"] += 1
    shown = escape_controls(text)
    assert not any(is_hidden(ch) or ch in "\n\t" for ch in shown)
    markup = html_visible(text)
    assert "<" not in BADGE.sub("", markup) and ">" not in BADGE.sub("", markup)
    assert html.unescape(BADGE.sub(lambda m: chr(int(m.group(1), 16)), markup)) == text


def test_zz_total_cases_fuzzed():  # type: ignore[no-untyped-def]
    """Runs last in this module: the figure quoted in docs/security.md."""
    total = sum(CASES.values())
    print(f"\nfuzzed cases: {total} {dict(CASES)}")
    if len(CASES) == 10:  # the whole module ran (not a -k selection)
        assert total >= 10_000, dict(CASES)
