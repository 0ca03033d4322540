"""Guided demo (for teaching): one poisoning story from clean answer to remediation, one step per click."""

from __future__ import annotations

import streamlit as st

from pages.backend import with_generator
from pages.common import (
    ensure_routed,
    get_demo_scenarios,
    get_detector,
    get_embedder,
    get_llm,
    get_pipeline,
    show_error,
    show_html,
    show_untrusted,
)
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.views.guided import STAGES, DemoState, advance, default_index
from ragsec_core.views.highlight import Mark, highlight_html, legend_html, plain_label

ensure_routed()
st.title("Guided demo")
st.caption("A harmless false-fact attack on a sample corpus, told in six steps: clean answer → inject poison → "
           "poisoned answer → attention collapse → traceback → remediation.")

items = get_demo_scenarios()
if not items:
    st.error("No sample corpora with demo queries are installed (sample_corpora/).")
    st.stop()
labels = [escape_controls(s.label) for s in items]
choice = st.selectbox("Scenario", range(len(items)), index=default_index(items), format_func=labels.__getitem__, key="demo_scenario")
scenario = items[choice]
state: DemoState | None = st.session_state.get("demo_state")
if state is None or state.scenario != scenario:
    state = st.session_state["demo_state"] = DemoState(scenario)

st.progress(state.stage / len(STAGES), text=f"Step {min(state.stage + 1, len(STAGES))} of {len(STAGES)}: "
            f"{state.next_stage or 'finished'}")
b1, b2 = st.columns([1, 5])
go = b1.button(f"Next: {state.next_stage} ▶" if state.next_stage else "Finished", type="primary", key="demo_next", disabled=state.done)
if b2.button("Restart", key="demo_restart"):
    st.session_state["demo_state"] = DemoState(scenario)
    st.rerun()
if go:
    try:
        with st.status(f"{state.next_stage} ...") as status:
            clean = with_generator(get_pipeline(scenario.corpus, None))  # the sidebar's generator
            poisoned = with_generator(get_pipeline(scenario.corpus, scenario.variant))
            advance(state, clean, poisoned, get_detector(), get_embedder(), surrogate=get_llm())
            status.update(label="Done", state="complete")
        st.rerun()  # redraw the progress bar and the Next button for the new stage
    except RagsecError as exc:
        show_error(exc)

r = state.results
q = scenario.query
if "clean" in r:
    st.subheader("1 · Clean answer")
    show_untrusted("Question", q.query)
    show_untrusted("Answer over the clean corpus", r["clean"].answer)
    st.caption(f"Expected: {plain_label(', '.join(q.answers))}")
if "injected" in r:
    st.subheader("2 · Inject poison")
    st.caption(f"The attacker plants {len(r['injected'])} document(s) asserting the false target "
               f"“{plain_label(q.target or '')}” (gold spans highlighted).")
    show_html(legend_html(["poison"]))
    for d in r["injected"]:
        show_html(highlight_html(d.text, [Mark(a, b, "poison", "planted claim") for a, b in d.poison_spans]))
if "poisoned" in r:
    t = r["poisoned"]
    st.subheader("3 · Poisoned answer")
    show_untrusted("Answer over the poisoned corpus", t.answer)
    (st.warning if t.signals.t_asr else st.info)(
        "The model adopted the planted false fact." if t.signals.t_asr else "The model did not adopt the false fact this time."
    )
if "dscan_poisoned" in r:
    from ragsec_core.views.attention import (
        detector_help,
        doc_layer_weights,
        entropy_context,
        heatmap_figure,
    )

    st.subheader("4 · Attention collapse")
    if r["dscan_poisoned"].surrogate:
        st.info("Surrogate: the answers came from an endpoint, so this is the local model's attention over the same prompts.")
    cols = st.columns(2)
    for col, key, tkey, title in ((cols[0], "dscan_clean", "clean", "clean"), (cols[1], "dscan_poisoned", "poisoned", "poisoned")):
        res, tr = r[key], r[tkey]
        ctx = entropy_context(res, get_detector())
        with col:
            st.metric(f"P(poisoned), {title}", f"{res.probability:.2f}", help=detector_help(get_detector()))
            st.metric(f"Document attention entropy, {title}", f"{ctx.value:.3f}")
            doc_labels = [f"#{tr.hits[s.hit].rank}{' (poison)' if tr.hits[s.hit].poison_spans else ''}" for s in tr.spans]
            st.plotly_chart(heatmap_figure(doc_layer_weights(res), doc_labels, res.implicated), key=f"demo_heat_{title}")
if "pass1" in r:
    from ragsec_core.views.report import chunk_marks

    p1, t = r["pass1"], r["poisoned"]
    st.subheader("5 · Traceback")
    st.caption(f"{len(p1.tests)} replays, {p1.model_calls} model calls, {p1.ms / 1000:.1f} s. "
               "Red: minimal causal span; pink: attribution span; gold: the planted claim.")
    show_html(legend_html(["poison", "attribution", "causal"]))
    for i in sorted({s.hit for s in p1.attribution + p1.causal}):
        show_html(highlight_html(t.hits[i].text, chunk_marks(t, p1, i)))
    show_untrusted("Answer with the traced characters masked", p1.final_answer)
if "remediation" in r:
    fix = r["remediation"]
    st.subheader("6 · Remediation")
    st.caption("The traced characters were deleted from the source document, the corpus re-indexed, and the question asked again.")
    show_untrusted("Answer after remediation", fix.after.answer)
    (st.success if fix.restored else st.warning)("Answer restored." if fix.restored else "The answer did not recover.")
