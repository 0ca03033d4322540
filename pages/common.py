"""Shared app plumbing: process-wide cached models/indexes and safe display of untrusted text.

Models and indexes are created once per process (`st.cache_resource`) and shared by every session;
generation is serialised inside `LLM.generate`, so concurrent sessions are safe.
"""

from __future__ import annotations

import streamlit as st

from ragsec_core.corpus import load_corpus
from ragsec_core.embed import Embedder
from ragsec_core.llm import LLM, load_llm
from ragsec_core.paths import default_trace_store
from ragsec_core.rag import Pipeline, build_retriever
from ragsec_core.text import escape_controls
from ragsec_core.trace import TraceStore


@st.cache_resource(show_spinner=False)
def get_llm(model: str | None = None, quantize: str = "none") -> LLM:
    return load_llm(model, quantize)


@st.cache_resource(show_spinner=False)
def get_embedder() -> Embedder:
    return Embedder()


@st.cache_resource(show_spinner=False)
def get_pipeline(corpus: str, variant: str | None, model: str | None = None, quantize: str = "none") -> Pipeline:
    data = load_corpus(corpus, variant)
    return Pipeline(data, build_retriever(data, get_embedder()), get_llm(model, quantize))


def trace_store() -> TraceStore:
    return TraceStore(default_trace_store())


def show_untrusted(label: str, text: str) -> None:
    """Corpus and model text is attacker-controlled: show it verbatim as plain text, never as markdown
    or HTML, with invisible characters turned into visible escapes."""
    st.caption(label)
    st.code(escape_controls(text, keep_newlines=True), language=None, wrap_lines=True)
