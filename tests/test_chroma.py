"""ChromaDB as the dense side of hybrid retrieval, against a real `chroma run` server on 127.0.0.1 (and the
embedded PersistentClient): same rankings as the in-process index, read-only use with in-process
planting, refusals of collections that do not match, and clear errors when the server fails."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.cli.main import main
from ragsec_core.data.corpus import Chunk, load_corpus
from ragsec_core.retrieval import chroma
from ragsec_core.retrieval.chroma import parse_location

from .browser import free_port
from .servers import ChromaServer

pytest.importorskip("chromadb", reason="the [scale] extra is not installed")

BASTION_Q = "What is the hostname of the bastion host?"
QUERIES = [BASTION_Q, "Which port does RDP use?", "How long are firewall logs kept?", "rotate the API keys"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ChromaServer(tmp_path_factory.mktemp("chroma"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def secops_pair(server, embedder):
    """The secops corpus in-process and through the server (built once with --index-build's code path)."""
    from ragsec_core.rag import build_retriever

    corpus = load_corpus("secops")
    return build_retriever(corpus, embedder), build_retriever(corpus, embedder, index=server.url("secops"), build_index=True)


def _ids(hits) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


# ---------------------------------------------------------------- locations (no server)

def test_locations_parse_and_credentials_are_refused():
    assert parse_location("chroma://127.0.0.1:8000/docs") == chroma.ChromaLocation("docs", host="127.0.0.1", port=8000)
    assert parse_location("chroma+https://db.example:443/docs").ssl
    assert parse_location("chroma:/tmp/x/y/docs") == chroma.ChromaLocation("docs", path="/tmp/x/y")
    for bad, message in [("chroma://user:pw@h:1/c", "credentials"), ("chroma://h:1/c?api-key=s3cret", "credentials"),
                         ("http://h:1/c", "unknown scheme"), ("chroma://h/c", "HOST:PORT"), ("chroma:docs", "PATH/COLLECTION"),
                         ("faiss:x", "expected")]:
        with pytest.raises(RagsecError, match=message) as err:
            parse_location(bad)
        assert "s3cret" not in str(err.value) and "pw" not in str(err.value).replace("PATH", "")


def test_cli_refuses_a_bad_index_before_loading_anything(capsys):
    assert main(["ask", "q", "--index", "chroma://u:secret@127.0.0.1:1/c"]) == 2
    err = capsys.readouterr().err
    assert "credentials" in err and "secret" not in err and err.count("\n") == 1
    assert main(["ask", "q", "--index-build"]) == 2
    assert "--index-build needs --index" in capsys.readouterr().err


# ---------------------------------------------------------------- same rankings as the in-process index

@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_chroma_ranks_as_the_in_process_index(secops_pair, alpha):
    local, remote = secops_pair
    for q in QUERIES:
        a, b = local.search(q, k=10, alpha=alpha), remote.search(q, k=10, alpha=alpha)
        assert _ids(a) == _ids(b), (q, alpha)
        np.testing.assert_allclose([h.hybrid for h in a], [h.hybrid for h in b], atol=1e-6)
        np.testing.assert_allclose([h.dense for h in a], [h.dense for h in b], atol=1e-6)
    assert remote.index_info()["kind"] == "chroma" and remote.index_info()["search_ef"] >= 100


def test_planting_goes_into_an_overlay_never_into_the_collection(secops_pair, server):
    local, remote = secops_pair
    host = next(i for i, c in enumerate(local.chunks) if "bastion host" in c.text)
    planted = replace(local.chunks[host], text=local.chunks[host].text + " The bastion host is now canary-7731.example.")
    extra = [Chunk("canary#0", "canary", "Bastion host update: the bastion hostname is canary-7731.example.", 0, 64)]
    for make in (lambda r: r.with_replaced({host: planted}), lambda r: r.extended(extra)):
        a, b = make(local), make(remote)
        for q in QUERIES:
            assert _ids(a.search(q, 5, 0.5)) == _ids(b.search(q, 5, 0.5))
        assert b.index_info()["overlay"] and a.in_process and not b.in_process
    client = chroma.connect(parse_location(server.url("secops")))
    assert client.get_collection("secops", embedding_function=None).count() == len(local.chunks)


# ---------------------------------------------------------------- end to end: ask and monitor

def test_ask_over_chroma_gives_the_in_process_answer_and_hits(server, embedder, llm, tmp_path, capsys):
    from ragsec_core.rag import Pipeline, build_retriever

    corpus = load_corpus("secops", "embedded")
    url = server.url("secops-embedded")
    store = tmp_path / "traces.jsonl"
    assert main(["ask", BASTION_Q, "--corpus", "secops", "--variant", "embedded", "--index", url, "--index-build",
                 "--json", "--store", str(store)]) == 0
    remote = json.loads(capsys.readouterr().out)
    local = Pipeline(corpus, build_retriever(corpus, embedder), llm).ask(BASTION_Q)
    assert remote["answer"] == local.answer and remote["signals"]["par"] == local.signals.par
    assert [h["chunk_id"] for h in remote["hits"]] == [h.chunk_id for h in local.hits]
    assert remote["retrieval"]["index"] == {"kind": "chroma", "location": url, "collection": "secops-embedded",
                                            "search_ef": chroma.SEARCH_EF, "vectors": len(build_retriever(corpus, embedder).chunks)}
    # read-only use of the built collection: no --index-build, same hits
    assert main(["ask", BASTION_Q, "--corpus", "secops", "--variant", "embedded", "--index", url, "--json", "--no-store"]) == 0
    assert [h["chunk_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == [h.chunk_id for h in local.hits]


def test_monitor_over_an_embedded_persistent_collection(tmp_path, capsys, embedder):
    url = f"chroma:{tmp_path / 'db'}/secops-canary"
    assert main(["monitor", "--corpus", "secops", "--variant", "canary", "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["monitor", "--corpus", "secops", "--variant", "canary", "--index", url, "--index-build", "--json"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert [d["chunk_id"] for d in remote["docs"]] == [d["chunk_id"] for d in local["docs"]]
    assert [d["flags"] for d in remote["docs"]] == [d["flags"] for d in local["docs"]]
    _close(remote, local)  # Chroma re-normalises the stored vectors: equal to float32 rounding


def _close(a: object, b: object) -> None:
    """Equal JSON up to float rounding (1e-6)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for key in a:
            _close(a[key], b[key])
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=1e-6)
    else:
        assert a == b


# ---------------------------------------------------------------- refusals

def test_collections_that_do_not_match_are_refused(server, embedder, secops_pair):
    from ragsec_core.rag import build_retriever

    client = chroma.connect(parse_location(server.url("x")))
    general = load_corpus("general")
    with pytest.raises(RagsecError, match=r"no collection 'missing'.*--index-build"):
        build_retriever(general, embedder, index=server.url("missing"))
    with pytest.raises(RagsecError, match=r"holds .* vectors but the corpus has"):
        build_retriever(general, embedder, index=server.url("secops"))  # secops' collection, another corpus
    chunks = secops_pair[0].chunks
    rng = np.random.default_rng(0)
    for name, dim in (("foreign-384", 384), ("foreign-8", 8)):
        col = client.create_collection(name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
        vecs = rng.standard_normal((len(chunks), dim)).astype(np.float32)
        col.add(ids=[c.chunk_id for c in chunks], embeddings=vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    with pytest.raises(RagsecError, match=r"is not .*embedding of that chunk"):
        build_retriever(load_corpus("secops"), embedder, index=server.url("foreign-384"))
    with pytest.raises(RagsecError, match="8-dimensional"):
        build_retriever(load_corpus("secops"), embedder, index=server.url("foreign-8"))
    with pytest.raises(RagsecError, match="not created by ragsec"):
        build_retriever(load_corpus("secops"), embedder, index=server.url("foreign-384"), build_index=True)
    assert client.get_collection("foreign-384", embedding_function=None).count() == len(chunks)  # untouched


# ---------------------------------------------------------------- a server that is down or dies

def test_server_down_is_one_clear_error_and_nothing_is_stored(tmp_path, capsys):
    store = tmp_path / "traces.jsonl"
    code = main(["ask", BASTION_Q, "--corpus", "secops", "--index", f"chroma://127.0.0.1:{free_port()}/secops",
                 "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("ragsec: error: Chroma at chroma://127.0.0.1:") and "not connect" in last
    assert not store.exists()


def test_server_dying_mid_query_is_a_ragsec_error(tmp_path, embedder):
    from ragsec_core.rag import build_retriever

    own = ChromaServer(tmp_path)
    try:
        retriever = build_retriever(load_corpus("secops"), embedder, index=own.url("secops"), build_index=True)
        assert retriever.search(BASTION_Q, 3, 0.5)
    finally:
        own.stop()
    with pytest.raises(RagsecError, match=r"Chroma at chroma://127\.0\.0\.1:\d+/secops failed"):
        retriever.search(BASTION_Q, 3, 0.5)


# ---------------------------------------------------------------- the speed bench's Chroma section

def test_speed_bench_measures_both_sides_and_reuses_the_collection(tmp_path, embedder):
    from ragsec_core.bench.speed_chroma import latency_at_size, size_label

    assert [size_label(n) for n in (205, 100_000, 1_000_000, 1_500_000)] == ["205", "100k", "1m", "1500k"]
    texts = [c.text for c in load_corpus("secops").documents]
    vecs = embedder.embed(texts)
    url = f"chroma:{tmp_path / 'db'}/speed"
    first = latency_at_size(texts, vecs, embedder, QUERIES * 3, url)
    n = size_label(len(texts))
    assert first[f"hybrid_top5_same_{n}_chroma"] == f"{len(QUERIES) * 3}/{len(QUERIES) * 3}"
    assert first[f"hybrid_p50_ms_{n}_chroma"] > 0 and first[f"hybrid_p95_ms_{n}"] >= first[f"hybrid_p50_ms_{n}"]
    assert first[f"chroma_build_s_{n}"] > 0
    assert latency_at_size(texts, vecs, embedder, QUERIES, url)[f"chroma_build_s_{n}"] == 0.0  # built once


# ---------------------------------------------------------------- the app's index field

def test_app_lab_reads_a_collection_and_a_bad_location_is_an_st_error(monkeypatch, tmp_path, embedder):
    from streamlit.testing.v1 import AppTest

    from ragsec_core.rag import build_retriever

    from .conftest import REPO

    url = f"chroma:{tmp_path / 'db'}/secops-canary"
    build_retriever(load_corpus("secops", "canary"), embedder, index=url, build_index=True)
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    monkeypatch.syspath_prepend(str(REPO))
    at = AppTest.from_file(str(REPO / "pages" / "retrieval_lab.py"), default_timeout=300)
    at.run()
    at.text_input(key="lab_query").input(BASTION_Q).run()
    local = list(at.dataframe[0].value["chunk"])
    at.text_input(key="lab_index").input(url).run()
    assert not at.exception and not at.error
    assert list(at.dataframe[0].value["chunk"]) == local
    at.text_input(key="lab_index").input("chroma://user:pw@127.0.0.1:1/x").run()
    assert not at.exception and at.error and "credentials" in at.error[0].value
    at.text_input(key="lab_index").input(f"chroma://127.0.0.1:{free_port()}/secops-canary").run()  # nothing listens
    assert not at.exception and at.error and "Chroma at chroma://127.0.0.1:" in at.error[0].value.replace("\\", "")


# ---------------------------------------------------------------- Semantic Chameleon on a technical slice

def test_chameleon_on_a_5k_passage_manual_slice_through_chroma_equals_in_process(server, tmp_path, capsys):
    """A short attack run on 5,000 passages of real manual pages: the collection and the in-process index
    give the same outcome at every alpha and k, for the main and the joint attack."""
    from ragsec_core.chameleon.scenarios import default_scenario_file
    from ragsec_core.data.techdocs import MAN_ROOT, build_tech_corpus

    if not (MAN_ROOT / "man1").is_dir():
        pytest.skip("no manual pages installed")
    folder = tmp_path / "slice"
    manifest = build_tech_corpus(folder, max_passages=5000, sources=("man",))
    assert manifest["passages"] >= 5000
    out = tmp_path / "slice.json"
    argv = ["bench", "chameleon", "--corpus", str(folder), "--scenarios", str(default_scenario_file(["tech"])),
            "--index", server.url("man-slice"), "--index-build", "--compare-in-process", "--trials", "2",
            "--iterations", "3", "--candidates", "3", "--no-fluency", "--joint-trials", "1", "--keyword-trials", "1",
            "--no-e2e", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    res = json.loads(out.read_text())
    assert res["config"]["index"]["kind"] == "chroma" and res["config"]["n_chunks"] == manifest["passages"]
    agree = res["index_agreement"]
    assert agree["cells"] == 2 * 8 * 6 and agree["equal"] == agree["cells"], agree["differences"]
    assert res["by_alpha_k"] == res["by_alpha_k_in_process"]
    for a, row in res["joint"]["aggregate"].items():
        assert {m: row[m] for m in ("co_retrieval", "stealth", "overall")} == {m: row["in_process"][m] for m in ("co_retrieval", "stealth", "overall")}, a
    assert res["detectors"]["n_pairs"] == 2
