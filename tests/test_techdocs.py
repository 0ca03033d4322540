"""The technical corpus (`--corpus tech`): real manual pages and HTML documentation rendered to text with
section ids and no markup left, the corpus folder and its counts, `ragsec corpora --json`, the shipped
scenarios, and the two things that make a 69k-passage corpus affordable: BM25 extended without a refit,
and an embedding that resumes after an interruption."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import tokenize
from ragsec_core.cli.main import main
from ragsec_core.data.corpus import TECH_CORPUS, built_corpus_dir, chunk_corpus, load_corpus
from ragsec_core.data.roff import render_man, unescape
from ragsec_core.data.techdocs import HANDBOOK_ROOT, KERNEL_ROOT, MAN_ROOT, build_tech_corpus, render_html
from ragsec_core.retrieval.bm25 import BM25

MAN_PAGES = ["man1/ssh.1.gz", "man5/pam.conf.5.gz", "man7/capabilities.7.gz"]
needs_man = pytest.mark.skipif(not all((MAN_ROOT / p).is_file() for p in MAN_PAGES),
                               reason="the manual pages ssh(1), pam.conf(5), capabilities(7) are not installed")
KERNEL_PAGE = KERNEL_ROOT / "admin-guide" / "LSM" / "Yama.html"
HANDBOOK_PAGE = HANDBOOK_ROOT / "sect.apparmor.html"
# Left-over markup: roff escapes and requests, HTML tags and entities, Sphinx's pilcrow links. (Technical
# text itself holds `<linux/capability.h>` and `<LF>`, so only HTML's own tag names count as tags.)
HTML_TAGS = "p|div|span|a|br|pre|code|tt|li|ul|ol|h[1-6]|table|tr|td|th|em|strong|b|i|img|dl|dt|dd|section|script|style"
MARKUP = re.compile(rf"\\[fs(*\[\"&-]|^\.[A-Za-z]{{1,3}}(\s|$)|</?({HTML_TAGS})(\s[^>]*)?/?>|&[a-z]+;|&#\d+;|\u00b6", re.M)


def _man(path: str) -> tuple[str, list[tuple[str, str]]]:
    return render_man(gzip.decompress((MAN_ROOT / path).read_bytes()).decode("utf-8", "replace"))


# ---------------------------------------------------------------- renderers on real pages

def test_roff_escapes_hand_cases():
    assert unescape(r"\fBssh\fR \-p \(em port \(aqx\(aq \e \&.x \*(lqq\*(rq") == "ssh -p \u2014 port 'x' \\ .x \u201cq\u201d"
    assert unescape(r'text \" a comment') == "text "
    name, parts = render_man(".TH FOO 1\n.SH NAME\nfoo \\- does\n.SH DESCRIPTION\n.B foo\nworks\n.BR bar (1).\n")
    assert name == "FOO(1)" and parts == [("NAME", "foo - does"), ("DESCRIPTION", "foo works bar(1).")]
    assert render_man(".so man1/other.1\n") == ("", [])  # an alias page has nothing of its own


@needs_man
@pytest.mark.parametrize("page, sections, words", [
    ("man1/ssh.1.gz", {"NAME", "SYNOPSIS", "DESCRIPTION", "AUTHENTICATION", "TCP FORWARDING"}, ["known_hosts", "-L"]),
    ("man5/pam.conf.5.gz", {"NAME", "DESCRIPTION"}, ["/etc/pam.d/", "requisite"]),
    ("man7/capabilities.7.gz", {"NAME", "DESCRIPTION"}, ["CAP_SYS_ADMIN", "privileged"]),
])
def test_real_man_pages_render_to_sections_without_markup(page, sections, words):
    name, parts = _man(page)
    titles = {t for t, _ in parts}
    assert sections <= titles, titles
    body = "\n".join(t for _, t in parts)
    assert MARKUP.search(body) is None, MARKUP.search(body)
    for w in words:
        assert w in body
    assert name.lower().startswith(Path(page).name.split(".")[0].lower())


@pytest.mark.skipif(not (KERNEL_PAGE.is_file() and HANDBOOK_PAGE.is_file()),
                    reason="linux-doc-6.1 / debian-handbook are not installed (make corpus-tech installs them)")
def test_real_html_pages_render_headings_as_sections_without_markup():
    title, parts = render_html(KERNEL_PAGE.read_text())
    assert "Yama" in title and any(h.startswith("ptrace_scope") for h, _ in parts)
    body = "\n".join(t for _, t in parts)
    assert "ptrace" in body and MARKUP.search(body) is None
    assert "Navigation" not in body and "Next" not in body.split()  # the theme's chrome is left out
    title, parts = render_html(HANDBOOK_PAGE.read_text())
    assert any("AppArmor" in h for h, _ in parts)
    assert MARKUP.search("\n".join(t for _, t in parts)) is None


def test_html_renderer_hand_case():
    html = ("<html><head><title>T</title><script>x=1</script></head><body><div role='navigation'>menu</div>"
            "<div itemprop='articleBody'><h1>Intro<a class='headerlink'>\u00b6</a></h1><p>One &amp; two.</p>"
            "<h2>Part</h2><p>Three</p><ul><li>a</li><li>b</li></ul></div><footer>f</footer></body></html>")
    assert render_html(html) == ("T", [("Intro", "One & two."), ("Part", "Three\n\na\n\nb")])


# ---------------------------------------------------------------- the corpus folder

@pytest.fixture
def man_root(tmp_path) -> Path:
    """A manual-page tree of real pages, an alias page and an excluded generated page."""
    if not all((MAN_ROOT / p).is_file() for p in MAN_PAGES):
        pytest.skip("the manual pages ssh(1), pam.conf(5), capabilities(7) are not installed")
    root = tmp_path / "man"
    for p in MAN_PAGES:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MAN_ROOT / p, root / p)
    (root / "man1" / "slogin.1.gz").write_bytes(gzip.compress(b".so man1/ssh.1\n"))
    (root / "man1" / "gcloud-x.1.gz").write_bytes(gzip.compress(b".TH X 1\n.SH NAME\ngenerated reference text here\n"))
    return root


def test_build_writes_section_documents_with_exact_offsets_and_counts(man_root, tmp_path):
    out = tmp_path / "tech"
    manifest = build_tech_corpus(out, roots={"man": man_root}, sources=("man",))
    corpus = load_corpus(out)
    chunks = chunk_corpus(corpus)
    assert manifest["documents"] == len(corpus.documents) and manifest["passages"] == len(chunks)
    assert manifest["sources"]["man"]["pages"] == 3  # the alias and the generated page are left out
    ids = {d.id for d in corpus.documents}
    assert {"man/man1/ssh.1#DESCRIPTION", "man/man5/pam.conf.5#DESCRIPTION"} <= ids
    assert not any("gcloud" in i or "slogin" in i for i in ids)
    by_id = {d.id: d for d in corpus.documents}
    assert by_id["man/man1/ssh.1#DESCRIPTION"].title.endswith("\u2014 DESCRIPTION")
    for c in chunks:
        assert by_id[c.doc_id].text[c.start:c.end] == c.text
    assert all(MARKUP.search(d.text) is None for d in corpus.documents)
    capped = build_tech_corpus(tmp_path / "small", roots={"man": man_root}, sources=("man",), max_passages=1)
    assert capped["sources"]["man"]["pages"] == 1 and capped["passages"] >= 1


def test_missing_documentation_is_one_clear_error(tmp_path):
    with pytest.raises(RagsecError, match=r"not installed: linux-doc-6\.1"):
        build_tech_corpus(tmp_path / "t", roots={"kernel": tmp_path / "nope"}, sources=("kernel",))


def test_tech_is_a_corpus_by_name_once_built_and_corpora_json_counts_it(man_root, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path / "home"))
    with pytest.raises(RagsecError, match="not built yet: run make corpus-tech"):
        load_corpus(TECH_CORPUS)
    assert main(["corpora", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["tech"]["passages"] is None and rows["secops"]["passages"] == len(chunk_corpus(load_corpus("secops")))
    assert {"name", "documents", "passages"} <= set(rows["general"])
    manifest = build_tech_corpus(built_corpus_dir(TECH_CORPUS), roots={"man": man_root}, sources=("man",))
    assert load_corpus(TECH_CORPUS).name == "tech"
    assert main(["corpora", "--json"]) == 0
    tech = {r["name"]: r for r in json.loads(capsys.readouterr().out)}["tech"]
    assert (tech["documents"], tech["passages"]) == (manifest["documents"], manifest["passages"])
    assert main(["corpora", "build"]) == 2 and "say which corpus" in capsys.readouterr().err


# ---------------------------------------------------------------- scenarios

def test_tech_scenarios_ship_in_the_package_and_are_the_default():
    from ragsec_core.chameleon.scenarios import default_scenario_file, load_scenarios

    path = default_scenario_file([TECH_CORPUS])
    assert path is not None and path.name == "tech_scenarios.json"
    scs = load_scenarios(path)
    assert len({s.target_query for s in scs}) >= 25 and len({s.name for s in scs}) == len(scs)
    assert len({s.payload_answer for s in scs}) == len(scs)
    for s in scs:
        assert len(s.benign_queries) >= 5 and len(s.sensitive_queries) >= 4
        assert s.payload_answer in s.payload and ("CANARY" in s.payload_answer or "example.invalid" in s.payload_answer)


# ---------------------------------------------------------------- what makes the size affordable

def test_bm25_extended_equals_a_refit_over_the_union():
    toks = [tokenize(c.text) for c in chunk_corpus(load_corpus("secops"))]
    extra = [tokenize("zzcanary break-glass VPN token"), tokenize("a sleeper about MFA and newword")]
    base, full = BM25().fit(toks), BM25().fit(toks + extra)
    ext = base.extended(extra)
    assert ext.vocab == full.vocab and (ext.matrix != full.matrix).nnz == 0
    q = "emergency VPN zzcanary code"
    assert np.array_equal(ext.scores(q), full.scores(q))
    assert base.matrix.shape[0] == len(toks)  # the base is left alone
    assert np.array_equal(base.extended([]).scores(q), base.scores(q))


def test_resumable_embedding_equals_one_pass_after_an_interruption(embedder, tmp_path):
    from ragsec_core.retrieval.embed import embed_resumable

    texts = [c.text for c in chunk_corpus(load_corpus("secops"))][:40]
    ref = embedder.embed(texts)
    folder = tmp_path / "parts"
    first = embed_resumable(embedder, texts, folder, shard=16)
    assert np.allclose(first, ref, atol=1e-5)
    (folder / "part-00001.npy").unlink()  # interrupted before the second shard was saved
    np.save(folder / "part-00002.npy", np.zeros((3, embedder.dim), np.float32))  # a shard of another run
    seen = []
    again = embed_resumable(embedder, texts, folder, progress=lambda d, n: seen.append(d), shard=16)
    assert np.array_equal(again[:16], first[:16]) and np.allclose(again, ref, atol=1e-5)
    assert seen[-1] == len(texts)
