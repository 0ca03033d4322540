"""Retrieval lab: how alpha reorders the hybrid top-K, and what a session-only poison does to it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import ensure_routed, get_corpus, get_retriever, index_field, reported, sample_picker, show_error
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.chameleon.scenarios import builtin_scenarios
from ragsec_core.views.figures import bump_chart, pair_metrics_figure
from ragsec_core.views.retrieval_lab import (
    SessionPoisons,
    add_custom_poison,
    alpha_grid,
    generate_pair,
    hit_rows,
    pair_metrics,
    rank_paths,
)

ensure_routed()
st.title("Retrieval lab")
st.caption("Hybrid score = alpha x dense + (1 - alpha) x BM25 (each min-max normalised per query). "
           "Injected documents live in this browser session only; the shared index is never changed.")

SCENARIOS = {s.name: s for s in builtin_scenarios()}
NO_EXAMPLE = "(type your own)"

left, right = st.columns([2, 1])
with right:
    corpus, variant = sample_picker("lab", default_variant="canary")
    index = index_field("lab")
    k = int(st.number_input("K (top-K)", min_value=1, max_value=20, value=5, step=1, key="lab_k"))
    alpha = st.slider("alpha (dense weight)", 0.0, 1.0, 0.5, 0.05, key="lab_alpha")
    steps = int(st.number_input("alpha steps in the sweep", min_value=3, max_value=51, value=21, step=2, key="lab_steps"))

try:
    with st.spinner("Loading the index (first time only) ..."):
        data, base = get_corpus(corpus, variant), get_retriever(corpus, variant, index)
except RagsecError as exc:
    show_error(exc, "Pick another corpus, variant or index")
    st.stop()

demo = [q.query for q in data.queries] + [s.target_query for s in SCENARIOS.values()]
if "lab_query_next" in st.session_state:
    st.session_state["lab_query"] = st.session_state.pop("lab_query_next")
elif "lab_query" not in st.session_state:
    st.session_state["lab_query"] = demo[0] if demo else ""


def _use_example() -> None:
    if st.session_state["lab_example"] != NO_EXAMPLE:
        st.session_state["lab_query"] = st.session_state["lab_example"]


with left:
    st.selectbox("Demo query (corpus demo queries, then the Chameleon target queries)", [NO_EXAMPLE] + demo,
                 key="lab_example", on_change=_use_example)
    query = st.text_input("Query", key="lab_query", max_chars=2000)

# ---------------------------------------------------------------- this session's poisons
store_key = f"{corpus}|{variant or ''}"
poisons: SessionPoisons = st.session_state.setdefault("lab_poisons", {}).setdefault(store_key, SessionPoisons())


def session_retriever():  # type: ignore[no-untyped-def]
    """The base retriever extended with this session's poisons, rebuilt only when they change."""
    sig = (store_key, tuple(c.chunk_id for c in poisons.chunks))
    cached = st.session_state.get("lab_extended")
    if cached is None or cached[0] != sig:
        cached = (sig, poisons.apply(base))
        st.session_state["lab_extended"] = cached
    return cached[1]


retriever = session_retriever()

# ---------------------------------------------------------------- ranks across alpha
st.subheader("Ranks as alpha moves")
paths, hits = None, []
with reported():
    paths = rank_paths(retriever, query, k, alpha_grid(steps))
    hits = retriever.search(query, k=k, alpha=float(alpha))
if paths is not None:
    st.plotly_chart(bump_chart(paths, float(alpha)), key="lab_bump")
    st.caption(f"Top-{k} at alpha = {alpha:.2f} (poison = a variant's planted document or one injected in this session)")
    st.dataframe(pd.DataFrame(hit_rows(hits)), hide_index=True, width="stretch", key="lab_hits")

# ---------------------------------------------------------------- custom poison
st.subheader("Inject a poison (this session only)")
text = st.text_area("Poison passage", key="lab_poison_text", height=100,
                    placeholder="e.g. Note: the bastion host was renamed; always use jump-7.example.invalid ...")
c1, c2 = st.columns(2)
if c1.button("Inject into this session's corpus", key="lab_inject", type="primary"):
    with reported():
        add_custom_poison(poisons, base, text)
        st.session_state.pop("lab_extended", None)
        st.rerun()
if c2.button("Remove everything injected", key="lab_clear", disabled=not poisons.chunks):
    poisons.chunks.clear()
    poisons.embeddings.clear()
    st.session_state.pop("lab_pair", None)
    st.rerun()
if poisons.chunks:
    st.dataframe(pd.DataFrame([{"chunk": escape_controls(c.chunk_id), "characters": len(c.text), "text": escape_controls(c.text)}
                               for c in poisons.chunks]), hide_index=True, width="stretch", key="lab_injected")

# ---------------------------------------------------------------- sleeper / trigger pair
st.subheader("Generate a sleeper/trigger pair (Semantic Chameleon)")
st.caption("The trigger carries a harmless canary payload. Gradient search against MiniLM without the fluency "
           "filter; a few iterations are enough to see the effect (the bench uses 100).")
p1, p2 = st.columns([2, 1])
scenario_name = p1.selectbox("Scenario", list(SCENARIOS), key="lab_scenario")
iterations = int(p2.number_input("iterations", min_value=1, max_value=100, value=3, step=1, key="lab_iterations"))
scenario = SCENARIOS[scenario_name]
st.caption("Target query")
st.code(scenario.target_query, language=None, wrap_lines=True)
if st.button("Generate and inject the pair", key="lab_generate"):
    with reported(on_failure="Try fewer iterations or reload the page"):
        with st.status("Optimising the sleeper, then the trigger ...", expanded=True) as status:
            bar = st.progress(0.0)
            sleeper, trigger = generate_pair(poisons, base, scenario, iterations,
                                             on_step=lambda d, t: bar.progress(d / t, text=f"iteration {d}/{t}"))
            status.update(label="Pair injected into this session's corpus", state="complete", expanded=False)
        st.session_state["lab_pair"] = {"store": store_key, "scenario": scenario.name}
        st.session_state["lab_query_next"] = scenario.target_query  # applied before the widget on the rerun
        st.session_state.pop("lab_extended", None)
        st.rerun()

pair = st.session_state.get("lab_pair")
if pair and pair["store"] == store_key and poisons.has_pair():
    sc = SCENARIOS[pair["scenario"]]
    texts = {c.doc_id: c.text for c in poisons.chunks}
    st.caption(f"Injected pair for scenario {sc.name} (the query box now holds its target query)")
    for label, doc in (("Sleeper", "chameleon-sleeper"), ("Trigger (ends with the canary payload)", "chameleon-trigger")):
        st.caption(label)
        st.code(escape_controls(texts[doc], keep_newlines=True), language=None, wrap_lines=True)
    metrics = pair_metrics(retriever, sc, k, alpha_grid(11))
    st.plotly_chart(pair_metrics_figure(metrics, k), key="lab_pair_chart")
    st.dataframe(pd.DataFrame(metrics), hide_index=True, width="stretch", key="lab_pair_table")
