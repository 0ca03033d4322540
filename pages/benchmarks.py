"""Benchmarks: plot the results.json of `ragsec bench traceback|dscan|chameleon`, or run a small Chameleon sweep."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import streamlit as st

from pages.common import ensure_routed, get_retriever, reported, show_error
from ragsec_core._util.errors import RagsecError
from ragsec_core.chameleon.options import METRICS
from ragsec_core.chameleon.scenarios import builtin_scenarios
from ragsec_core.data.corpus import corpus_names
from ragsec_core.views.bench_results import (
    chameleon_detector_rocs,
    chameleon_lines,
    detect_kind,
    dscan_aucs,
    dscan_roc,
    list_results,
    outcome_counts,
    parse_results,
    points_table,
    small_chameleon_run,
    traceback_points,
)
from ragsec_core.views.figures import (
    auc_bars,
    chameleon_figure,
    line_by_x,
    outcome_bars,
    roc_figure,
    traceback_scatter,
)
from ragsec_core.views.highlight import escape_markdown

BENCH_DIR = Path(os.environ.get("RAGSEC_BENCH_DIR", Path(__file__).resolve().parent.parent / "bench" / "out"))

ensure_routed()
st.title("Benchmarks")
st.caption("Load the results.json a `ragsec bench` command wrote (traceback, dscan or chameleon); the page "
           "recognises the bench from the file's keys. Values from files are shown as plain text.")

found = list_results(BENCH_DIR)
picked = st.multiselect(f"Results files in {BENCH_DIR}", [p.name for p in found], default=[p.name for p in found],
                        key="bench_files")
uploads = st.file_uploader("... or upload results.json files", type=["json"], accept_multiple_files=True,
                           key="bench_upload")

# ---------------------------------------------------------------- small in-app run
with st.expander("Start a small Chameleon run (a few trials on a sample corpus, with progress)"):
    r1, r2, r3 = st.columns([1, 2, 1])
    run_corpus = r1.selectbox("Corpus", corpus_names(), key="bench_run_corpus")
    names = [s.name for s in builtin_scenarios()]
    run_scen = r2.multiselect("Scenarios (one trial each)", names, default=names[:2], key="bench_run_scenarios")
    run_iter = int(r3.number_input("iterations", min_value=1, max_value=50, value=2, step=1, key="bench_run_iter"))
    if st.button("Run", key="bench_run", type="primary"):
        with reported("Pick at least one scenario and run again", "Try fewer scenarios or iterations"):
            with st.status("Chameleon mini run ...", expanded=True) as status:
                bar = st.progress(0.0, text="loading the index")
                retriever = get_retriever(run_corpus, None)
                chosen = [s for s in builtin_scenarios() if s.name in run_scen]
                res = small_chameleon_run(retriever, chosen, run_iter, on_progress=lambda f, t: bar.progress(f, text=t))
                res["config"]["corpus"] = run_corpus
                status.update(label=f"Done: {len(chosen)} trials", state="complete", expanded=False)
            st.session_state["bench_mini"] = res
    if "bench_mini" in st.session_state:
        st.download_button("Download this run's results.json", json.dumps(st.session_state["bench_mini"], indent=1),
                           file_name="chameleon_mini_results.json", mime="application/json", key="bench_mini_dl")

# ---------------------------------------------------------------- load and classify
loaded: dict[str, list[tuple[str, dict]]] = {k: [] for k in ("traceback", "dscan", "chameleon")}
sources: list[tuple[str, bytes | None]] = []
for name in picked:
    try:
        sources.append((name, (BENCH_DIR / name).read_bytes()))
    except OSError as exc:
        st.error(f"Cannot read '{escape_markdown(name)}' ({exc.strerror}): check the file exists and is readable.")
sources += [(u.name, u.getvalue()) for u in uploads or []]
for name, data in sources:
    try:
        obj = parse_results(data, name)
        loaded[detect_kind(obj)].append((name, obj))
    except RagsecError as exc:
        show_error(exc)
if "bench_mini" in st.session_state:
    loaded["chameleon"].append(("mini run (this session)", st.session_state["bench_mini"]))

if not any(loaded.values()):
    st.info("No results loaded yet: pick or upload a results.json, or start a small run above.")
    st.stop()

# ---------------------------------------------------------------- traceback
if loaded["traceback"]:
    st.header("Traceback (Pass-1)")
    points = [p for name, r in loaded["traceback"] for p in traceback_points(r, name)]
    if points:
        st.plotly_chart(traceback_scatter(points), key="bench_tb_scatter")
        st.dataframe(pd.DataFrame(points_table(points)), hide_index=True, width="stretch", key="bench_tb_points")
        st.caption("char_f1_caused: Char F1 on the events the planted text caused (the benchmark's gold replay: "
                   "with every planted character masked, the answer no longer states the target); empty in "
                   "results written before it.")
    else:
        st.warning("These traceback files have no char_f1/char_fpr yet (no traced events): re-run the bench with more questions.")
    outcomes = {name: outcome_counts(r) for name, r in loaded["traceback"] if outcome_counts(r)}
    if outcomes:
        st.plotly_chart(outcome_bars(outcomes), key="bench_tb_outcomes")

# ---------------------------------------------------------------- D-SCAN
for i, (name, r) in enumerate(loaded["dscan"]):
    st.header("D-SCAN")
    st.text(name)
    roc = dscan_roc(r)
    if roc:
        st.plotly_chart(roc_figure({"D-SCAN": {**roc, "auc": r.get("auc")}}, "D-SCAN ROC"), key=f"bench_ds_roc_{i}")
    else:
        st.caption("This file stores AUCs but no ROC points (`roc`), so the AUCs are compared instead of a curve.")
    aucs = dscan_aucs(r)
    if aucs:
        st.plotly_chart(auc_bars(aucs), key=f"bench_ds_auc_{i}")
    per_layer = r.get("per_layer_auc")
    if isinstance(per_layer, dict) and per_layer:
        sel = {k: v for k, v in per_layer.items() if isinstance(v, list)}
        st.plotly_chart(line_by_x(sel, "Single-feature AUC per layer", "layer", "AUC"), key=f"bench_ds_layers_{i}")

# ---------------------------------------------------------------- Chameleon
if loaded["chameleon"]:
    st.header("Semantic Chameleon")
    metric = st.selectbox("Metric", METRICS, key="bench_ch_metric")
    for i, (name, r) in enumerate(loaded["chameleon"]):
        st.text(name)
        lines = chameleon_lines(r, metric)
        if lines:
            st.plotly_chart(chameleon_figure(lines, metric), key=f"bench_ch_{i}")
        else:
            st.warning("This Chameleon file has no `by_alpha_k` rates yet (no finished trial).")
        for cfg, curves in chameleon_detector_rocs(r).items():
            st.plotly_chart(roc_figure(curves, f"Corpus monitor ROC ({cfg})"), key=f"bench_ch_roc_{i}_{cfg}")
