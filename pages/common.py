"""Shared app plumbing: process-wide cached models/indexes and safe display of untrusted text.

Models and indexes are created once per process (`st.cache_resource`) and shared by every session;
generation is serialised inside `LLM.generate`, so concurrent sessions are safe.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import streamlit as st

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.paths import default_trace_store
from ragsec_core._util.text import escape_controls
from ragsec_core.data.corpus import DEFAULT_CORPUS, Corpus, corpus_names, load_corpus, variant_names
from ragsec_core.data.trace import TraceStore
from ragsec_core.models.llm import LLM, load_llm
from ragsec_core.models.options import DEFAULT_QUANTIZE
from ragsec_core.rag import Pipeline, build_retriever
from ragsec_core.retrieval.embed import Embedder, shared_embedder
from ragsec_core.retrieval.hybrid import HybridRetriever
from ragsec_core.traceback.snapshot import Snapshot
from ragsec_core.views.guided import Scenario, scenarios

# ---------------------------------------------------------------- navigation (app.py is the only router)

APP_SCRIPT = Path(__file__).resolve().parent.parent / "app.py"
_ROUTED: ContextVar[bool] = ContextVar("ragsec_routed", default=False)


def app_pages() -> list[st.Page]:
    """The app's pages in menu order. Fresh objects on every call: `st.navigation` marks the page it returns
    as runnable once, so page objects are never shared between runs or sessions."""
    return [
        st.Page("pages/investigate.py", title="Investigate", icon=":material/search:", default=True),
        st.Page("pages/traceback.py", title="Traceback", icon=":material/troubleshoot:"),
        st.Page("pages/retrieval_lab.py", title="Retrieval lab", icon=":material/tune:"),
        st.Page("pages/monitor.py", title="Corpus monitor", icon=":material/monitoring:"),
        st.Page("pages/benchmarks.py", title="Benchmarks", icon=":material/bar_chart:"),
        st.Page("pages/demo.py", title="Guided demo", icon=":material/school:"),
    ]


@contextmanager
def routed() -> Iterator[None]:
    """app.py runs the page `st.navigation` returned inside this block, so the page knows app.py routed it."""
    token = _ROUTED.set(True)
    try:
        yield
    finally:
        _ROUTED.reset(token)


def ensure_routed() -> None:
    """First call of every page: make sure the page runs inside app.py's `st.navigation`.

    A `pages/` folder beside the entry script puts a fresh Streamlit server in its legacy pages-directory mode
    until some session calls `st.navigation` (documented: from then on every session ignores the folder). In
    that mode the first request to a deep link (`/traceback`) runs the page file alone, without app.py and with
    every file of `pages/` in the sidebar (AppTest is in that mode on every run: it resets the flag). Such a run
    hands over to app.py in place, in the same script run, so widget events (a button click) are not lost to a
    rerun: app.py sets the page config, calls `st.navigation` (which ends the mode for the whole server),
    resolves this URL to this page and runs it; the stray run then stops. A page that is itself the entry
    script (`AppTest.from_file` on one page) is left alone."""
    if _ROUTED.get():
        return
    entry = getattr(sys.modules.get("__main__"), "__file__", None)
    if entry is None or Path(entry).resolve() != APP_SCRIPT:
        return
    code = compile(APP_SCRIPT.read_bytes(), str(APP_SCRIPT), "exec")
    exec(code, {"__name__": "__main__", "__file__": str(APP_SCRIPT)})  # our own entry script, run as Streamlit runs it
    st.stop()


@st.cache_resource(show_spinner=False)
def get_llm(model: str | None = None, quantize: str = DEFAULT_QUANTIZE) -> LLM:
    return load_llm(model, quantize)


@st.cache_resource(show_spinner=False)
def get_embedder() -> Embedder:
    """The process's one MiniLM, which Pass-1's attribution boundary also reads (`traceback.copies`)."""
    return shared_embedder()


@st.cache_resource(show_spinner=False)
def get_corpus(corpus: str, variant: str | None) -> Corpus:
    return load_corpus(corpus, variant)


@st.cache_resource(show_spinner=False)
def get_demo_scenarios() -> list[Scenario]:
    """The Guided demo's scenario list reads both sample corpora: once per process, not on every rerun."""
    return scenarios()


@st.cache_resource(show_spinner=False)
def get_retriever(corpus: str, variant: str | None, index: str | None = None) -> HybridRetriever:
    """One retriever per (corpus, variant, index) per process, shared by every session and never mutated:
    session-only documents go into a new retriever made by `HybridRetriever.extended` (an in-process
    overlay over a Chroma collection). `index` is a Chroma location, which never holds credentials."""
    return build_retriever(get_corpus(corpus, variant), get_embedder(), index=index)


@st.cache_resource(show_spinner=False)
def get_pipeline(corpus: str, variant: str | None, model: str | None = None, quantize: str = DEFAULT_QUANTIZE,
                 index: str | None = None) -> Pipeline:
    return Pipeline(get_corpus(corpus, variant), get_retriever(corpus, variant, index), get_llm(model, quantize))


def index_field(key: str) -> str | None:
    """The optional dense index of the corpus picker: a Chroma collection holding this corpus's vectors
    (read-only; build it with `ragsec ask --index URL --index-build`). Checked here, so a typo is one error."""
    from ragsec_core.retrieval.chroma import parse_location

    value = st.text_input("Dense index (optional)", key=f"{key}_index", max_chars=500,
                          placeholder="chroma://127.0.0.1:8000/COLLECTION or chroma:PATH/COLLECTION",
                          help="Empty: ragsec's in-process index. A token comes from CHROMA_AUTH_TOKEN on the server "
                               "running the app, never from this field.").strip()
    if not value:
        return None
    try:
        parse_location(value)
    except RagsecError as exc:
        show_error(exc, "Fix the index location or clear the field")
        st.stop()
    return value


CLEAN = "(clean)"
UPLOAD = "(upload a file)"


def sample_picker(prefix: str, default_corpus: str = "secops", default_variant: str = CLEAN) -> tuple[str, str | None]:
    """Sample corpus and poisoned variant selectboxes (pages that need no uploads); returns (corpus, variant or None)."""
    names = corpus_names()  # the samples, and `tech` once `make corpus-tech` has built it
    corpus = st.selectbox("Corpus", names, index=names.index(default_corpus) if default_corpus in names else 0,
                          key=f"{prefix}_corpus")
    variants = [CLEAN] + variant_names(corpus)
    variant = st.selectbox("Poisoned variant", variants,
                           index=variants.index(default_variant) if default_variant in variants else 0,
                           key=f"{prefix}_variant")
    return corpus, None if variant == CLEAN else variant


def trace_store() -> TraceStore:
    return TraceStore(default_trace_store())


def show_untrusted(label: str, text: str) -> None:
    """Corpus and model text is attacker-controlled: show it verbatim as plain text, never as markdown
    or HTML, with invisible characters turned into visible escapes."""
    st.caption(label)
    st.code(escape_controls(text, keep_newlines=True), language=None, wrap_lines=True)


# ---------------------------------------------------------------- corpus choice shared by the analyst pages

@st.cache_resource(show_spinner=False)
def get_detector():  # type: ignore[no-untyped-def]
    from ragsec_core.dscan.detector import Detector

    return Detector.load()


@st.cache_resource(show_spinner=False, max_entries=8)
def get_upload_pipeline(sha: str, name: str, _data: bytes) -> Pipeline:
    """One pipeline per uploaded file content (keyed by its SHA-256, the bytes themselves are not hashed
    by Streamlit on every rerun). Uploads are immutable, so sharing a pipeline across sessions that
    uploaded the same bytes exposes nothing either did not already have."""
    corpus = _upload_corpus(name, _data)
    return Pipeline(corpus, build_retriever(corpus, get_embedder()), get_llm())


def _upload_corpus(name: str, data: bytes) -> Corpus:
    """An uploaded corpus file, parsed into a fresh temporary folder (the cached callers key it by content)."""
    import tempfile

    from ragsec_core.data.corpus import load_corpus_bytes

    return load_corpus_bytes(name, data, tempfile.mkdtemp(prefix="ragsec-upload-"))


@st.cache_resource(show_spinner=False, max_entries=8)
def get_snapshot(corpus: str, sha: str = "", _data: bytes = b"") -> Snapshot:
    """A trusted snapshot for Pass-1's revert: a clean sample corpus by name, or an uploaded corpus file
    (keyed by its SHA-256, as `get_upload_pipeline`). Cached, so its chunk alignments survive reruns."""
    return Snapshot.from_corpus(_upload_corpus(corpus, _data) if sha else get_corpus(corpus, None))


def corpus_picker(key: str = "corpus") -> tuple[str, str | None, object | None]:
    """Sample corpus + variant, or an uploaded corpus file. Returns (corpus, variant, upload)."""
    names = corpus_names()  # the samples, and `tech` once `make corpus-tech` has built it
    options = names + [UPLOAD]
    default = names.index(DEFAULT_CORPUS) if DEFAULT_CORPUS in names else 0
    corpus = st.selectbox("Corpus", options, index=default, key=key)
    if corpus == UPLOAD:
        upload = st.file_uploader("Corpus file (.jsonl, .csv or attack .json)", type=["jsonl", "csv", "json"], key=f"{key}_file")
        return corpus, None, upload
    variant = st.selectbox("Poisoned variant", [CLEAN] + variant_names(corpus), key=f"{key}_variant")
    return corpus, None if variant == CLEAN else variant, None


def pipeline_for(corpus: str, variant: str | None, upload: object | None, index: str | None = None) -> Pipeline | None:
    """The cached pipeline for a picker choice; None while an upload is still missing."""
    import hashlib

    if corpus != UPLOAD:
        return get_pipeline(corpus, variant, index=index)
    if upload is None:
        return None
    data = upload.getvalue()  # type: ignore[attr-defined]
    return get_upload_pipeline(hashlib.sha256(data).hexdigest(), upload.name, data)  # type: ignore[attr-defined]


def show_html(fragment: str) -> None:
    """Render markup built by `ragsec_core.views.highlight` (escaped text + our own tags only)."""
    from ragsec_core.views.highlight import CSS

    st.html(f"<style>{CSS}</style>{fragment}")



@contextmanager
def reported(advice: str = "", on_failure: str = "Reload the page and try again") -> Iterator[None]:
    """Run a block; a RagsecError (bad input, + `advice`) or a model/torch/OS failure (+ `on_failure`) becomes
    one escaped `st.error` saying what to do, never a traceback. `st.rerun` / `st.stop` pass through."""
    try:
        yield
    except RagsecError as exc:
        show_error(exc, advice)
    except (RuntimeError, ValueError, OSError, MemoryError) as exc:
        show_error(f"The operation failed ({type(exc).__name__}: {str(exc)[:300]})", on_failure)


def show_error(exc: BaseException | str, hint: str = "") -> None:
    """One `st.error` for a failure: the message may quote attacker-controlled names (files, chunk ids), and
    `st.error` renders markdown, so it is escaped; `hint` says what to do next."""
    from ragsec_core.views.highlight import escape_markdown

    text = escape_markdown(str(exc))
    st.error(f"{text}. {hint}" if hint else text)
