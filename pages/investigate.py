"""Investigate: ask a question over a (possibly poisoned) corpus and inspect the Pass-0 trace."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import get_pipeline, show_untrusted, trace_store
from ragsec_core.corpus import load_corpus, sample_corpus_names, variant_names
from ragsec_core.errors import RagsecError
from ragsec_core.text import escape_controls

st.title("Investigate")
st.caption("Run RAG with prompt-anchored tracing (Pass-0). Everything shown from the corpus or the model is untrusted text.")

left, right = st.columns([2, 1])
with right:
    names = sample_corpus_names()
    corpus = st.selectbox("Corpus", names, index=names.index("general") if "general" in names else 0, key="corpus")
    variant = st.selectbox("Poisoned variant", ["(clean)"] + variant_names(corpus), key="variant")
    alpha = st.slider("alpha (dense weight in hybrid)", 0.0, 1.0, 0.5, 0.05, key="alpha")
    k = st.number_input("k (retrieved chunks)", min_value=1, max_value=20, value=5, step=1, key="k")
variant_arg = None if variant == "(clean)" else variant
demo = load_corpus(corpus).queries


def _use_example() -> None:
    if st.session_state["example"] != NO_EXAMPLE:
        st.session_state["query"] = st.session_state["example"]


NO_EXAMPLE = "(type your own)"
with left:
    st.selectbox("Demo query", [NO_EXAMPLE] + [q.query for q in demo], key="example", on_change=_use_example)
    query = st.text_input("Query", key="query", max_chars=2000)
    ask = st.button("Ask", type="primary", key="ask")

if ask:
    try:
        with st.status("Running RAG ...", expanded=False) as status:
            status.update(label="Loading models and index (first time only) ...")
            pipeline = get_pipeline(corpus, variant_arg)
            status.update(label="Retrieving and generating ...")
            trace = pipeline.ask(query, k=int(k), alpha=float(alpha))
            trace_store().append(trace)
            status.update(label="Done", state="complete")
        st.session_state["trace"] = trace
    except RagsecError as exc:
        st.error(str(exc))

trace = st.session_state.get("trace")
if trace is not None:
    show_untrusted("Answer", trace.answer)
    s = trace.signals
    cols = st.columns(5)
    for col, (name, value) in zip(
        cols, [("PAR", s.par), ("T_ASR", s.t_asr), ("CONFUSION", s.confusion), ("UNK", s.abstained), ("correct", s.correct)]
    ):
        col.metric(name, "-" if value is None else ("yes" if value else "no"))
    st.caption("Trace id")
    st.code(trace.trace_id, language=None)
    used = set(trace.used)
    table = pd.DataFrame(
        [
            {
                "rank": h.rank,
                "in prompt": i in used,
                "chunk": escape_controls(h.chunk_id),
                "hybrid": round(h.hybrid, 4),
                "bm25": round(h.bm25, 3),
                "dense": round(h.dense, 4),
                "known poison": bool(h.poison_spans),
                "text": escape_controls(h.text),
            }
            for i, h in enumerate(trace.hits)
        ]
    )
    st.subheader("Retrieved passages")
    st.dataframe(table, hide_index=True, width="stretch")
    with st.expander("Rendered prompt"):
        st.code(escape_controls(trace.prompt, keep_newlines=True), language=None, wrap_lines=True)
