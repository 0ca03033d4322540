"""Shared app plumbing: process-wide cached models/indexes and safe display of untrusted text.

Models and indexes are created once per process (`st.cache_resource`) and shared by every session;
generation is serialised inside `LLM.generate`, so concurrent sessions are safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from ragsec_core.data.corpus import Corpus, load_corpus, sample_corpus_names, variant_names
from ragsec_core.retrieval.embed import Embedder
from ragsec_core._util.errors import RagsecError
from ragsec_core.views.guided import Scenario, scenarios
from ragsec_core.models.llm import LLM, load_llm
from ragsec_core._util.paths import default_trace_store
from ragsec_core.rag import Pipeline, build_retriever
from ragsec_core.retrieval.hybrid import HybridRetriever
from ragsec_core._util.text import escape_controls
from ragsec_core.data.trace import TraceStore


def _leave_pages_directory_mode() -> None:
    """Streamlit treats a `pages/` folder beside the entry script as an old-style (v1) multipage app until
    `st.navigation` first runs, so the very first request of a fresh server to a deep link (`/traceback`)
    would run the page file alone, without `app.py` and with every file of `pages/` in the sidebar.
    Switching the flag off and rerunning sends that request through `app.py`'s navigation instead."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


_leave_pages_directory_mode()


@st.cache_resource(show_spinner=False)
def get_llm(model: str | None = None, quantize: str = "none") -> LLM:
    return load_llm(model, quantize)


@st.cache_resource(show_spinner=False)
def get_embedder() -> Embedder:
    return Embedder()


@st.cache_resource(show_spinner=False)
def get_corpus(corpus: str, variant: str | None) -> Corpus:
    return load_corpus(corpus, variant)


@st.cache_resource(show_spinner=False)
def get_demo_scenarios() -> list[Scenario]:
    """The Guided demo's scenario list reads both sample corpora: once per process, not on every rerun."""
    return scenarios()


@st.cache_resource(show_spinner=False)
def get_retriever(corpus: str, variant: str | None) -> HybridRetriever:
    """One retriever per (corpus, variant) per process, shared by every session and never mutated:
    session-only documents go into a new retriever made by `HybridRetriever.extended`."""
    return build_retriever(get_corpus(corpus, variant), get_embedder())


@st.cache_resource(show_spinner=False)
def get_pipeline(corpus: str, variant: str | None, model: str | None = None, quantize: str = "none") -> Pipeline:
    return Pipeline(get_corpus(corpus, variant), get_retriever(corpus, variant), get_llm(model, quantize))


CLEAN = "(clean)"


def sample_picker(prefix: str, default_corpus: str = "secops", default_variant: str = CLEAN) -> tuple[str, str | None]:
    """Sample corpus and poisoned variant selectboxes (pages that need no uploads); returns (corpus, variant or None)."""
    names = sample_corpus_names()
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
    import tempfile

    from ragsec_core.data.corpus import load_corpus_bytes

    folder = tempfile.mkdtemp(prefix="ragsec-upload-")
    corpus = load_corpus_bytes(name, _data, folder)
    return Pipeline(corpus, build_retriever(corpus, get_embedder()), get_llm())


def corpus_picker(key: str = "corpus") -> tuple[str, str | None, object | None]:
    """Sample corpus + variant, or an uploaded corpus file. Returns (corpus, variant, upload)."""
    names = sample_corpus_names()
    options = names + ["(upload a file)"]
    default = names.index("general") if "general" in names else 0
    corpus = st.selectbox("Corpus", options, index=default, key=key)
    if corpus == "(upload a file)":
        upload = st.file_uploader("Corpus file (.jsonl, .csv or attack .json)", type=["jsonl", "csv", "json"], key=f"{key}_file")
        return corpus, None, upload
    variant = st.selectbox("Poisoned variant", ["(clean)"] + variant_names(corpus), key=f"{key}_variant")
    return corpus, None if variant == "(clean)" else variant, None


def pipeline_for(corpus: str, variant: str | None, upload: object | None) -> Pipeline | None:
    """The cached pipeline for a picker choice; None while an upload is still missing."""
    import hashlib

    if corpus != "(upload a file)":
        return get_pipeline(corpus, variant)
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
