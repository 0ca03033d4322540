"""Investigate (attention), Traceback stepper and Guided demo pages through AppTest, with the real models."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import REPO

BASTION = "What is the hostname of the bastion host?"


pytestmark = pytest.mark.model  # every test here runs SmolLM2 through the app

@pytest.fixture
def app_env(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    return tmp_path


def _page(name: str) -> AppTest:
    return AppTest.from_file(str(REPO / "pages" / name), default_timeout=600)


def test_investigate_shows_attention_verdict_and_sends_to_traceback(app_env):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.run()
    at.selectbox(key="corpus").select("secops").run()
    at.selectbox(key="corpus_variant").select("embedded").run()
    at.text_input(key="query").input(BASTION).run()
    at.button(key="ask").click().run()
    assert not at.exception and not at.error
    labels = [m.label for m in at.metric]
    assert {"P(poisoned)", "Document attention entropy", "Implicated document"} <= set(labels)
    assert at.get("plotly_chart"), "the documents x layers heatmap is drawn"
    shaded = [h.proto.body for h in at.html]
    assert any("rgba(" in b for b in shaded), "token-level shading inside the passages"
    assert "gate02" in at.code[0].value  # the poisoned answer, shown as plain text
    at.button(key="to_traceback").click().run()
    assert not at.exception
    assert at.title[0].value == "Traceback"
    assert at.session_state["tb_trace"].query == BASTION


def test_traceback_page_runs_steps_exports_and_remediates(app_env, pipeline):
    trace = pipeline("secops", "embedded").ask(BASTION)
    at = _page("traceback.py")
    at.session_state["tb_trace"] = trace
    at.session_state["tb_pipeline"] = pipeline("secops", "embedded")
    at.run()
    # The select boxes offer the core's option lists (one source of truth), with the core's defaults.
    from ragsec_core.data.spans import DEFAULT_MASK_MODE, MASK_MODES
    from ragsec_core.data.trace import DEFAULT_TRIGGER, TRIGGERS
    from ragsec_core.traceback.options import DEFAULT_OBJECTIVE, OBJECTIVES

    assert at.selectbox(key="tb_trigger").options == list(TRIGGERS) and at.selectbox(key="tb_trigger").value == DEFAULT_TRIGGER
    assert at.selectbox(key="tb_objective").options == list(OBJECTIVES)
    assert at.selectbox(key="tb_objective").value == DEFAULT_OBJECTIVE
    assert at.selectbox(key="tb_mask").options == list(MASK_MODES) and at.selectbox(key="tb_mask").value == DEFAULT_MASK_MODE
    at.button(key="tb_run").click().run()
    assert not at.exception and not at.error
    assert (app_env / "data" / "artifacts" / f"{trace.trace_id}.pass1.json").exists()
    html = "".join(h.proto.body for h in at.html)
    assert 'class="rs-causal"' in html and "gate02" in html
    step_line = [m.value for m in at.markdown if m.value.startswith("**Step")]
    assert step_line and step_line[0].startswith("**Step 1 of")
    n = int(step_line[0].split(" of ")[1].split("**")[0])
    assert n >= 2
    at.button(key="tb_next").click().run()
    assert next(m.value for m in at.markdown if m.value.startswith("**Step")).startswith("**Step 2 of")
    at.button(key="tb_back").click().run()
    assert next(m.value for m in at.markdown if m.value.startswith("**Step")).startswith("**Step 1 of")
    assert len(at.get("download_button")) == 2
    at.button(key="tb_remediate").click().run()
    assert not at.exception and not at.error
    captions = [c.value for c in at.caption]
    assert "Answer after remediation" in captions
    assert "gate02" not in at.code[-1].value  # the answer after remediation no longer carries the planted claim


def test_traceback_page_reverts_to_a_trusted_snapshot(app_env, pipeline):
    """The snapshot picker: the clean sample corpus as the trusted copy, the embedded claim reverted in one
    replay and reported; an upload choice without a file is one st.error and no artifact."""
    trace = pipeline("secops", "embedded").ask(BASTION)
    at = _page("traceback.py")
    at.session_state["tb_trace"] = trace
    at.run()
    at.selectbox(key="tb_snapshot").select("(upload a file)").run()
    at.button(key="tb_run").click().run()
    assert not at.exception and at.error and "snapshot" in at.error[0].value
    assert not (app_env / "data" / "artifacts" / f"{trace.trace_id}.pass1.json").exists()
    at.selectbox(key="tb_snapshot").select("secops").run()
    at.button(key="tb_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    res = at.session_state["tb_artifact"].pass1
    assert res.snapshot.startswith("secops (sha256") and [r.path for r in res.rounds] == ["revert"] and res.resolved
    assert any("secops (sha256" in c.value for c in at.code)  # the label, shown as text


def test_guided_demo_runs_end_to_end(app_env):
    at = _page("demo.py")
    at.run()
    assert not at.exception
    for _ in range(6):
        at.button(key="demo_next").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
    heads = [h.value for h in at.subheader]
    assert heads == ["1 · Clean answer", "2 · Inject poison", "3 · Poisoned answer", "4 · Attention collapse",
                     "5 · Traceback", "6 · Remediation"]
    assert at.button(key="demo_next").disabled
    assert at.success, "the remediated answer is restored"
    at.button(key="demo_restart").click().run()
    assert not at.subheader


def test_endpoint_backend_in_the_sidebar_asks_traces_and_labels_the_surrogate(app_env, llama_server):
    """The sidebar's endpoint: Investigate asks over HTTP (the trace records the endpoint, D-SCAN is the
    local surrogate's), Traceback replays it there; a malformed URL is one st.error, and a typed key stays
    in this session (never in the trace)."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.run()
    at.radio(key="backend").set_value("endpoint").run()
    at.text_input(key="ep_url").input("http://user:pw@127.0.0.1:1/v1").run()
    at.text_input(key="ep_model").input(llama_server.model).run()
    at.selectbox(key="corpus").select("secops").run()
    at.selectbox(key="corpus_variant").select("embedded").run()
    at.text_input(key="query").input(BASTION).run()
    at.button(key="ask").click().run()
    assert at.error and "credentials" in at.error[0].value and "pw" not in at.error[0].value
    at.text_input(key="ep_url").input("http://127.0.0.1:9/v1").run()  # nothing listens there
    at.button(key="ask").click().run()
    assert not at.exception and at.error and "failed after 3 attempts" in at.error[0].value
    assert "trace" not in at.session_state  # nothing was stored for the failed ask
    at.text_input(key="ep_url").input(llama_server.base_url).run()
    at.text_input(key="ep_key").input("sk-app-session-key-123").run()
    at.button(key="ask").click().run()
    assert not at.exception and not at.error
    trace = at.session_state["trace"]
    assert trace.model["backend"] == "endpoint" and trace.signals.par, trace.answer
    assert "sk-app-session-key-123" not in trace.to_json()
    assert any("Surrogate" in i.value for i in at.info)
    at.button(key="to_traceback").click().run()
    at.button(key="tb_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    art = at.session_state["tb_artifact"]
    assert art.pass1.backend == "endpoint" and art.pass1.resolved
