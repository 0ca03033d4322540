"""Investigate: ask a question over a (possibly poisoned) corpus, inspect the Pass-0 trace and its attention."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.backend import with_generator
from pages.common import (
    UPLOAD,
    corpus_picker,
    ensure_routed,
    get_corpus,
    get_detector,
    get_embedder,
    get_llm,
    index_field,
    pipeline_for,
    show_error,
    show_html,
    show_untrusted,
    trace_store,
)
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.views.highlight import escape_markdown, plain_label

ensure_routed()
st.title("Investigate")
st.caption("Run RAG with prompt-anchored tracing (Pass-0). Everything shown from the corpus or the model is untrusted text.")

left, right = st.columns([2, 1])
with right:
    corpus, variant, upload = corpus_picker()
    index = index_field("corpus") if upload is None else None
    alpha = st.slider("alpha (dense weight in hybrid)", 0.0, 1.0, 0.5, 0.05, key="alpha")
    k = st.number_input("k (retrieved chunks)", min_value=1, max_value=20, value=5, step=1, key="k")
    attention = st.checkbox("Attention analysis (D-SCAN)", value=True, key="dscan",
                            help="Replays the answer with attention capture and draws the detector's samples (a few seconds).")
demo = get_corpus(corpus, None).queries if upload is None and corpus != UPLOAD else []

NO_EXAMPLE = "(type your own)"

def _use_example() -> None:
    if st.session_state["example"] != NO_EXAMPLE:
        st.session_state["query"] = st.session_state["example"]


with left:
    st.selectbox("Demo query", [NO_EXAMPLE] + [q.query for q in demo], key="example", on_change=_use_example)
    query = st.text_input("Query", key="query", max_chars=2000)
    ask = st.button("Ask", type="primary", key="ask")

if ask:
    try:
        with st.status("Running RAG ...", expanded=False) as status:
            status.update(label="Loading models and index (first time only) ...")
            pipeline = pipeline_for(corpus, variant, upload, index)
            if pipeline is None:
                raise RagsecError("upload a corpus file first (.jsonl, .csv or attack .json)")
            pipeline = with_generator(pipeline)
            status.update(label="Retrieving and generating ...")
            trace = pipeline.ask(query, k=int(k), alpha=float(alpha))
            trace_store().append(trace)
            st.session_state["trace"], st.session_state["pipeline"] = trace, pipeline
            st.session_state.pop("dscan_result", None)
            if attention and trace.spans:
                from ragsec_core.dscan.detector import analyse_trace

                status.update(label="Attention analysis (D-SCAN) ...")
                st.session_state["dscan_result"] = analyse_trace(  # an endpoint's trace: on the local surrogate
                    trace, get_llm(), detector=get_detector(), embedder=get_embedder(), keep_rows=True
                )
            status.update(label="Done", state="complete")
    except RagsecError as exc:
        show_error(exc)

trace = st.session_state.get("trace")
if trace is not None:
    show_untrusted("Answer", trace.answer)
    s = trace.signals
    cols = st.columns(5)
    for col, (name, value) in zip(
        cols, [("PAR", s.par), ("T_ASR", s.t_asr), ("CONFUSION", s.confusion), ("UNK", s.abstained), ("correct", s.correct)]
    ):
        col.metric(name, "-" if value is None else ("yes" if value else "no"))
    c1, c2 = st.columns([3, 1])
    with c1:
        st.caption("Trace id")
        st.code(trace.trace_id, language=None)
    with c2:
        if st.button("Trace back this answer →", key="to_traceback", help="Open the Pass-1 traceback stepper on this trace"):
            st.session_state["tb_trace"] = trace
            st.session_state["tb_pipeline"] = st.session_state.get("pipeline")
            st.session_state.pop("tb_artifact", None)
            st.switch_page("pages/traceback.py")
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

    result = st.session_state.get("dscan_result")
    if result is not None:
        from ragsec_core.views.attention import (
            detector_help,
            doc_layer_weights,
            entropy_context,
            heatmap_figure,
            token_weights,
        )
        from ragsec_core.views.highlight import shade_html

        st.subheader("Attention over the retrieved documents (D-SCAN)")
        if result.surrogate:
            st.info(f"Surrogate: the answer came from an endpoint, so this attention is the local model's "
                    f"({escape_markdown(result.surrogate)}) reading the same prompt and answer.")
        ctx = entropy_context(result, get_detector())
        implicated = result.documents[result.implicated]
        m1, m2, m3 = st.columns(3)
        m1.metric("P(poisoned)", f"{result.probability:.2f}", "poisoned" if result.poisoned else "clean",
                  delta_color="off", delta_arrow="off", help=detector_help(get_detector()))
        m2.metric("Document attention entropy", f"{ctx.value:.3f}",
                  None if ctx.clean_low is None else f"clean range {ctx.clean_low:.2f}–{ctx.clean_high:.2f}",
                  delta_color="off", delta_arrow="off")
        m3.metric("Implicated document", f"#{trace.hits[implicated.hit].rank}" if implicated.hit is not None else "-")
        if ctx.below_clean:
            st.warning("Attention collapsed: the entropy is below the 5th percentile of clean generations of this model.")
        st.caption("Implicated chunk")
        st.code(escape_controls(implicated.chunk_id or ""), language=None)
        labels = [f"#{trace.hits[sp.hit].rank} {sp.chunk_id}" for sp in trace.spans]
        st.plotly_chart(heatmap_figure(doc_layer_weights(result), labels, result.implicated), key="heatmap")
        st.caption("Token-level attention from the answer (detector's layer band, mean over heads and answer tokens)")
        for sp, ranges in zip(trace.spans, token_weights(result, trace, get_llm())):
            with st.expander(f"#{trace.hits[sp.hit].rank} {plain_label(sp.chunk_id)}", expanded=sp.hit == implicated.hit):
                show_html(shade_html(trace.hits[sp.hit].text, ranges))
    with st.expander("Rendered prompt"):
        st.code(escape_controls(trace.prompt, keep_newlines=True), language=None, wrap_lines=True)
