"""Traceback: run RAGCharacter Pass-1 on a trace and walk it one replay at a time."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from pages.backend import generator_for
from pages.common import (
    UPLOAD,
    ensure_routed,
    get_llm,
    get_pipeline,
    get_snapshot,
    show_error,
    show_html,
    show_untrusted,
    trace_store,
)
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.data.corpus import corpus_names
from ragsec_core.data.spans import DEFAULT_MASK_MODE, MASK_MODES
from ragsec_core.data.trace import DEFAULT_TRIGGER, TRIGGERS
from ragsec_core.traceback.boundary import REASONS
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE, OBJECTIVES
from ragsec_core.traceback.snapshot import Snapshot
from ragsec_core.views.highlight import Mark, highlight_html, legend_html

NO_SNAPSHOT = "(none)"

ensure_routed()
st.title("Traceback")
st.caption("RAGCharacter Pass-1: mask candidate evidence, replay the model, and keep the characters whose removal "
           "removes the event. Every step below is one logged replay.")

# ---------------------------------------------------------------- which trace
source = st.radio("Trace", ["from Investigate", "from the trace store", "upload an artifact"], horizontal=True, key="tb_source")
trace = None
if source == "from Investigate":
    trace = st.session_state.get("tb_trace")
    if trace is None:
        st.info("Ask a question on the Investigate page and press “Trace back this answer”, or pick a stored trace.")
elif source == "from the trace store":
    records = list(trace_store().records())[-200:][::-1]
    options = {r["trace_id"]: f"{r['trace_id']}  {'PAR ' if (r.get('signals') or {}).get('par') else ''}"
               f"{escape_controls(str(r.get('query')))[:60]} → {escape_controls(str(r.get('answer')))[:40]}" for r in records}
    if not options:
        st.info("The trace store is empty: ask a question first.")
    else:
        tid = st.selectbox("Stored trace", list(options), format_func=options.get, key="tb_store_id")
        if st.button("Load trace", key="tb_load"):
            try:
                st.session_state["tb_trace"] = trace_store().get(tid)
                st.session_state["tb_pipeline"] = None
                st.session_state.pop("tb_artifact", None)
            except RagsecError as exc:
                show_error(exc)
        trace = st.session_state.get("tb_trace")
else:
    up = st.file_uploader("Pass-1 artifact (.json from `ragsec trace` or this page)", type=["json"], key="tb_upload")
    if up is not None and st.session_state.get("tb_upload_name") != (up.name, up.size):
        from ragsec_core.traceback.artifact import artifact_from_dict

        try:
            import json

            art = artifact_from_dict(json.loads(up.getvalue().decode("utf-8")))
            st.session_state.update(tb_artifact=art, tb_trace=art.trace, tb_pipeline=None, tb_step=0, tb_upload_name=(up.name, up.size))
        except (ValueError, UnicodeDecodeError) as exc:
            show_error(f"not a readable artifact: {exc}", "Upload the JSON written by `ragsec trace` or by this page")
        except RagsecError as exc:
            show_error(exc)
    trace = st.session_state.get("tb_trace")

if trace is None:
    st.stop()

show_untrusted("Query", trace.query)
show_untrusted("Answer under investigation", trace.answer)
c1, c2, c3 = st.columns(3)
triggers = list(TRIGGERS)
trigger = c1.selectbox("Trigger", triggers, index=triggers.index(DEFAULT_TRIGGER), key="tb_trigger")
objective = c2.selectbox("Influence objective", OBJECTIVES, index=OBJECTIVES.index(DEFAULT_OBJECTIVE), key="tb_objective",
                         help="event: label-free (the answer stops repeating the event); oracle: uses the known target")
mask_mode = c3.selectbox("Masking", MASK_MODES, index=MASK_MODES.index(DEFAULT_MASK_MODE), key="tb_mask")
snap_name = st.selectbox("Trusted snapshot", [NO_SNAPSHOT] + corpus_names() + [UPLOAD], key="tb_snapshot",
                         help="a copy of the corpus from before the incident: each round first reverts the used chunks' "
                              "changes since it (the snapshot's text put back, not deleted). Only this undoes a "
                              "typo-perturbed copy (GARAG). A sample corpus here is its clean version.")
snap_file = (st.file_uploader("Snapshot corpus file (.jsonl, .csv or attack .json)", type=["jsonl", "csv", "json"],
                              key="tb_snapshot_file") if snap_name == UPLOAD else None)


def chosen_snapshot() -> Snapshot | None:
    """The picked snapshot (cached per corpus or upload), or None."""
    if snap_name == NO_SNAPSHOT:
        return None
    if snap_name != UPLOAD:
        return get_snapshot(snap_name)
    if snap_file is None:
        raise RagsecError("pick the snapshot's corpus file, or set the trusted snapshot to none")
    data = snap_file.getvalue()
    return get_snapshot(snap_file.name, hashlib.sha256(data).hexdigest(), data)


if st.button("Run Pass-1", type="primary", key="tb_run"):
    from ragsec_core._util.paths import data_dir
    from ragsec_core.traceback.artifact import Artifact, save_artifact
    from ragsec_core.traceback.ragcharacter import run_pass1

    try:
        with st.status("Tracing back ...", expanded=False) as status:
            status.update(label="Loading the model (first time only) ...")
            llm = generator_for(trace)
            if llm.model_id != trace.model.get("id"):
                st.warning("This trace was made with another model; the replay uses the one picked in the sidebar.")
            status.update(label="Replaying masked prompts (fast path → chunk → sentence → phrase → bisection) ...")
            # an endpoint's trace is read for the boundary by the local default model (loaded once per process)
            reader = get_llm() if llm.backend == "endpoint" else None
            result = run_pass1(llm, trace, trigger, objective, mask_mode, reader=reader, snapshot=chosen_snapshot())
            art = Artifact(trace, result)
            save_artifact(data_dir() / "artifacts" / f"{trace.trace_id}.pass1.json", art)
            st.session_state.update(tb_artifact=art, tb_step=0)
            status.update(label=f"Done: {len(result.tests)} replays", state="complete")
    except RagsecError as exc:
        show_error(exc)

art = st.session_state.get("tb_artifact")
if art is None or art.trace.trace_id != trace.trace_id:
    st.stop()

# Imported only once there is an artifact to show (the page's first screens stay light).
from ragsec_core.traceback.artifact import (  # noqa: E402
    QUESTION_CAVEAT,
    access_line,
    boundary_line,
    cost_summary,
    named_in_question,
    prompt_window,
    steps,
)
from ragsec_core.views.report import chunk_marks, report_html, step_marks  # noqa: E402

res = art.pass1
if not res.triggered:
    st.warning(f"Trigger {res.trigger} does not fire on this trace: there is no event to trace. Try ANY or ALWAYS.")
    st.stop()

# ---------------------------------------------------------------- outcome
st.subheader("Outcome")
o1, o2 = st.columns(2)
with o1:
    show_untrusted("Original answer", res.original_answer)
with o2:
    show_untrusted("Sanitised answer (all causal masks applied)", res.final_answer)
(st.success if res.resolved else st.warning)("Event gone after masking." if res.resolved else "The event persists after the rounds budget.")
if res.snapshot:  # the label holds a corpus or file name: shown as text
    show_untrusted("Trusted snapshot (changes since it reverted first)", res.snapshot)
if res.rounds and res.rounds[0].path == "unchanged":
    st.info("Reverting every change since the snapshot did not undo the event: it does not come from the "
            "corpus's changes, and nothing is reported.")
named = named_in_question(art.trace, res)
if named:  # the message is ours; the names come from the answer: shown as untrusted text
    st.warning(QUESTION_CAVEAT)
    show_untrusted("Named in the question", ", ".join(named))
show_html(legend_html(["poison", "attribution", "causal"]))
for i in sorted({s.hit for s in res.attribution + res.causal}):
    h = trace.hits[i]
    why = sorted({REASONS[s.reason] for s in res.attribution if s.hit == i and s.reason in REASONS})
    st.caption(f"Chunk #{h.rank}" + (f" · reported by {'; '.join(why)}" if why else " · masked, not reported"))
    st.code(escape_controls(h.chunk_id), language=None)
    show_html(highlight_html(h.text, chunk_marks(trace, res, i)))
cost = cost_summary(res)
cc = st.columns(4)
cc[0].metric("Replays", cost["tests"])
cc[1].metric("Model calls", cost["model_calls"])
cc[2].metric("Forward-pass equivalents", cost["forward_pass_equivalents"])
cc[3].metric("Time", f"{cost['total_ms'] / 1000:.1f} s")
st.caption(f"Replayed on: {access_line(res)} · boundary: {boundary_line(res)}")
if res.usage:  # black-box: what the endpoint was sent
    ec = st.columns(4)
    ec[0].metric("Endpoint requests", res.usage.get("requests", 0))
    ec[1].metric("Prompt tokens", res.usage.get("prompt_tokens", 0))
    ec[2].metric("Completion tokens", res.usage.get("completion_tokens", 0))
    ec[3].metric("Endpoint time", f"{res.usage.get('seconds', 0):.1f} s")

# ---------------------------------------------------------------- stepper
st.subheader("Step through every replay")
all_steps = steps(res)
if all_steps:
    idx = st.session_state["tb_step"] = max(0, min(st.session_state.get("tb_step", 0), len(all_steps) - 1))

    def _move(delta: int) -> None:  # on_click runs before the rerun, so both buttons render the new state
        st.session_state["tb_step"] = max(0, min(st.session_state.get("tb_step", 0) + delta, len(all_steps) - 1))

    b1, b2, b3 = st.columns([1, 1, 4])
    b1.button("◀ Back", key="tb_back", disabled=idx == 0, on_click=_move, args=(-1,))
    b2.button("Next ▶", key="tb_next", disabled=idx >= len(all_steps) - 1, on_click=_move, args=(1,))
    step = all_steps[idx]
    t = step.test
    b3.markdown(f"**Step {idx + 1} of {len(all_steps)}** · round {t.round + 1} · stage `{t.stage}`")
    m = st.columns(4)
    m[0].metric("Influence", f"{t.influence:.3f}")
    m[1].metric("Success", "yes" if t.success else "no")
    m[2].metric("Replay ms", f"{t.ms:.0f}")
    m[3].metric("Cached", "yes" if t.cached else "no")
    show_untrusted("Replayed answer", t.answer)
    lo, hi = prompt_window(trace, step)
    st.caption(f"Masked prompt (characters {lo}–{hi}; struck-through grey = masked in this replay)")
    show_html(highlight_html(trace.prompt[lo:hi], [Mark(x.start - lo, x.end - lo, x.kind, x.title) for x in step_marks(step)]))
    st.dataframe(pd.DataFrame([{"step": s.index + 1, "round": s.test.round + 1, "stage": s.test.stage,
                                "masked": " | ".join(escape_controls(r.text) for r in s.test.spans),
                                "answer": escape_controls(s.test.answer), "influence": s.test.influence,
                                "success": s.test.success, "ms": s.test.ms, "cached": s.test.cached} for s in all_steps]),
                 hide_index=True, width="stretch")

# ---------------------------------------------------------------- export and remediation
e1, e2 = st.columns(2)
e1.download_button("Artifact (JSON)", art.to_json(), file_name=f"{trace.trace_id}.pass1.json", mime="application/json", key="tb_dl_json")
e2.download_button("Report (HTML)", report_html(art), file_name=f"{trace.trace_id}.report.html", mime="text/html", key="tb_dl_html")

st.subheader("Remediate")
st.caption("Delete the attributed characters from their source documents, re-index, and ask again.")
if st.button("Remove traced span and re-ask", key="tb_remediate", disabled=not res.attribution):
    from ragsec_core.traceback.remediate import remediate, remediation_spans, sample_origin

    pipeline = st.session_state.get("tb_pipeline")
    try:
        origin = sample_origin(trace)
        if pipeline is None and origin is not None:
            pipeline = get_pipeline(*origin)
        if pipeline is None or pipeline.corpus.content_hash() != trace.retrieval.get("corpus_hash"):
            raise RagsecError("the corpus this trace was made on is not loaded here: start from Investigate with the same corpus")
        with st.status("Re-indexing and asking again ...") as status:
            fix = remediate(pipeline, trace, remediation_spans(res))  # a reverted change gets its snapshot text back
            status.update(label="Done", state="complete")
        st.session_state["tb_remediation"] = fix
    except RagsecError as exc:
        show_error(exc)
fix = st.session_state.get("tb_remediation")
if fix is not None and fix.before.trace_id == trace.trace_id:
    show_untrusted("Answer after remediation", fix.after.answer)
    (st.success if fix.restored else st.warning)("Answer restored." if fix.restored else "The answer did not recover.")
    st.dataframe(pd.DataFrame([{"document": escape_controls(r.doc_id), "chars": f"[{r.start}, {r.end})",
                                "removed text": escape_controls(r.text), "put back (snapshot)": escape_controls(r.replacement)}
                               for r in fix.removals]), hide_index=True)
