"""Corpus monitor: per-document poisoning scores (QPD, keyword anomaly, drift, clustering), flags, ROC."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import ensure_routed, get_corpus, get_retriever, index_field, reported, sample_picker
from ragsec_core.views.figures import roc_figure
from ragsec_core.views.monitor import (
    DETECTOR_LABELS,
    default_queries,
    monitor_corpus,
    qpd_threshold,
)

ensure_routed()
st.title("Corpus monitor")
st.caption("Scores every chunk for signs of targeted poisoning (Semantic Chameleon §4). Sensitive queries: the "
           "built-in scenario families; benign: their benign queries plus the corpus demo queries "
           "(as `ragsec bench monitor`).")

c1, c2, c3 = st.columns([2, 1, 1])
with c1:
    corpus, variant = sample_picker("mon", default_variant="canary")
    index = index_field("mon")
k = int(c2.number_input("k", min_value=1, max_value=20, value=5, step=1, key="mon_k"))
alpha = c3.slider("alpha", 0.0, 1.0, 0.5, 0.05, key="mon_alpha")

if st.button("Run the monitor", type="primary", key="mon_run"):
    with reported("Check the corpus and the k/alpha settings, then run again", "Reload the page and run it again"):
        with st.status("Running the corpus monitor ...", expanded=True) as status:
            bar = st.progress(0.0, text="loading the corpus and index (first time only)")
            data, retriever = get_corpus(corpus, variant), get_retriever(corpus, variant, index)
            sens, ben = default_queries(data)
            bar.progress(0.4, text=f"retrieving {len(sens)} sensitive and {len(ben)} benign queries, scoring "
                                   f"{len(retriever.chunks)} chunks")
            view = monitor_corpus(data, retriever, k=k, alpha=float(alpha))
            bar.progress(1.0, text="done")
            status.update(label=f"Monitor done: {len(view.report.flagged)} of {len(view.report.docs)} chunks flagged",
                          state="complete", expanded=False)
        st.session_state["mon_view"] = {"key": (corpus, variant, k, float(alpha)), "view": view}

res = st.session_state.get("mon_view")
if res is None:
    st.info("Pick a corpus (a poisoned variant has labels, so the ROC and best F1 are shown) and press Run.")
    st.stop()
if res["key"] != (corpus, variant, k, float(alpha)):
    st.warning("The settings changed since this result was computed: press Run to refresh it.")
view = res["view"]
cfg = view.report.config

m = st.columns(4)
m[0].metric("chunks", len(view.report.docs))
m[1].metric("flagged", len(view.report.flagged))
m[2].metric("known poisons (chunks)", sum(d.doc_id in view.poisoned for d in view.report.docs))
m[3].metric("QPD threshold", f"{cfg['qpd_threshold']:.2f}")
st.caption(f"{cfg['n_sensitive']} sensitive / {cfg['n_benign']} benign queries at k={cfg['k']}, alpha={cfg['alpha']}; "
           f"static scores flag at robust z >= {cfg['robust_z']}; QPD flags when r_s - r_b > the threshold "
           f"({qpd_threshold(corpus):.2f} for this corpus).")

st.subheader("Flagged documents")
flagged = view.rows(flagged_only=True)
if flagged:
    st.dataframe(pd.DataFrame(flagged), hide_index=True, width="stretch", key="mon_flagged")
else:
    st.success("No document was flagged.")

st.subheader("Detector scores per document")
st.dataframe(pd.DataFrame(view.rows()), hide_index=True, width="stretch", height=320, key="mon_all")

if view.evaluation is None:
    st.info("No labels: this corpus has no planted poisons, so there is no ROC. Pick a poisoned variant to see one.")
else:
    ev = view.evaluation
    st.subheader(f"ROC against the planted poisons ({ev['n_poisoned']} poisoned / {ev['n_clean']} clean chunks)")
    curves = {DETECTOR_LABELS[d]: {"fpr": ev[d]["roc"]["fpr"], "tpr": ev[d]["roc"]["tpr"], "auc": ev[d]["auc"]}
              for d in DETECTOR_LABELS}
    st.plotly_chart(roc_figure(curves, "Detector ROC (score >= threshold flags)"), key="mon_roc")
    st.caption("Best F1 per detector (threshold chosen with the labels: an upper bound, not a deployable setting)")
    st.dataframe(pd.DataFrame(view.best_f1_rows()), hide_index=True, width="stretch", key="mon_f1")
