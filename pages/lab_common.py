"""Cached corpus and retriever for the pages that need retrieval but no LLM (Retrieval lab, Corpus monitor).

One retriever per (corpus, variant) per process, shared by every session and never mutated: session-only
documents go into a new retriever made by `HybridRetriever.extended`.
"""

from __future__ import annotations

import streamlit as st

from pages.common import get_embedder
from ragsec_core.corpus import Corpus, load_corpus, sample_corpus_names, variant_names
from ragsec_core.rag import build_retriever
from ragsec_core.retrieval import HybridRetriever

CLEAN = "(clean)"


@st.cache_resource(show_spinner=False)
def get_corpus(corpus: str, variant: str | None) -> Corpus:
    return load_corpus(corpus, variant)


@st.cache_resource(show_spinner=False)
def get_retriever(corpus: str, variant: str | None) -> HybridRetriever:
    return build_retriever(get_corpus(corpus, variant), get_embedder())


def sample_picker(prefix: str, default_corpus: str = "secops", default_variant: str = CLEAN) -> tuple[str, str | None]:
    """Sample corpus and poisoned variant selectboxes; returns (corpus, variant or None for clean)."""
    names = sample_corpus_names()
    corpus = st.selectbox("Corpus", names, index=names.index(default_corpus) if default_corpus in names else 0,
                          key=f"{prefix}_corpus")
    variants = [CLEAN] + variant_names(corpus)
    variant = st.selectbox("Poisoned variant", variants,
                           index=variants.index(default_variant) if default_variant in variants else 0,
                           key=f"{prefix}_variant")
    return corpus, None if variant == CLEAN else variant
