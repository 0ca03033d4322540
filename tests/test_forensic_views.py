"""Pass-1 artifacts, the stepper view, HTML report, remediation and attention views on a real poisoned trace."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragsec_core.data.trace import overlaps
from ragsec_core.traceback.artifact import (
    Artifact,
    artifact_from_dict,
    cost_summary,
    load_artifact,
    masked_prompt,
    save_artifact,
    steps,
)
from ragsec_core.views.highlight import Mark, highlight_html, plain_label, shade_html

BASTION = "What is the hostname of the bastion host?"
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror=alert(1)>\u202e\u200b[x](http://evil.example)'


def test_highlight_escapes_everything_and_marks_invisible_characters():
    out = highlight_html(HOSTILE, [Mark(0, 8, "causal"), Mark(4, 20, "attribution")])
    assert "<script" not in out and "<img" not in out and "&lt;scr" in out and "&lt;img" in out
    assert "[U+202E]" in out and "[U+200B]" in out and "\u202e" not in out
    assert out.count("<mark") == 3  # [0,4) causal, [4,8) causal wins the overlap, [8,20) attribution
    assert 'class="rs-causal"' in out.split("<mark")[2]
    shaded = shade_html(HOSTILE, [(0, 8, 1.0)])
    assert "<script" not in shaded and "rgba(" in shaded
    label = plain_label("[click](http://evil.example) **bold** \u202e")
    assert "\\[" in label and "\\*" in label and "\u202e" not in label


def test_highlight_rejects_unknown_kinds():
    with pytest.raises(ValueError):
        highlight_html("abc", [Mark(0, 1, "bogus")])


@pytest.fixture(scope="module")
def case(pipeline, llm):
    """The secops embedded attack on the bastion hostname: trace + Pass-1 result."""
    from ragsec_core.traceback.ragcharacter import run_pass1

    p = pipeline("secops", "embedded")
    trace = p.ask(BASTION)
    assert trace.signals.t_asr, f"the default model should adopt this planted claim: {trace.answer!r}"
    return p, trace, run_pass1(llm, trace)


def test_artifact_round_trip_and_steps(case, tmp_path):
    _, trace, res = case
    art = Artifact(trace, res)
    path = save_artifact(tmp_path / "a.pass1.json", art)
    back = load_artifact(path)
    assert back.to_dict() == art.to_dict()
    all_steps = steps(back.pass1)
    assert len(all_steps) == len(res.tests) > 0
    for st in all_steps:
        shown = masked_prompt(trace, st, res.mask_mode)
        for s in st.test.spans:  # what a step masked is really gone from the prompt the model saw
            assert len(shown) <= len(trace.prompt) - (s.prompt[1] - s.prompt[0]) + 1e-9
    cost = cost_summary(res)
    assert cost["tests"] == len(res.tests) and cost["model_calls"] == res.model_calls


def test_artifacts_written_before_span_lists_still_load(case):
    """Rounds used to hold one attribution/causal span or null; they now hold lists."""
    _, trace, res = case
    d = Artifact(trace, res).to_dict()
    for r in d["pass1"]["rounds"]:
        r["attribution"] = r["attribution"][0] if r["attribution"] else None
        r["causal"] = r["causal"][0] if r["causal"] else None
    back = artifact_from_dict(d)
    assert [[s.text for s in r.causal] for r in back.pass1.rounds] == [[s.text for s in r.causal][:1] for r in res.rounds]
    assert len(steps(back.pass1)) == len(res.tests)


def test_artifact_loader_rejects_other_json(tmp_path):
    from ragsec_core._util.errors import RagsecError

    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.raises(RagsecError, match="not a ragsec Pass-1 artifact"):
        load_artifact(bad)


def test_report_is_self_contained_and_escaped(case, tmp_path):
    from ragsec_core.cli.main import main

    _, trace, res = case
    d = Artifact(trace, res).to_dict()
    d["trace"]["query"] = HOSTILE
    d["pass1"]["final_answer"] = HOSTILE
    path = save_artifact(tmp_path / "h.pass1.json", artifact_from_dict(d))
    assert main(["report", str(path), "--out", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert "<script" not in html.lower() and "<img" not in html.lower() and "&lt;img src=x onerror" in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "src=" not in html.replace("&lt;img src=x", "")  # no asset of our own, and the hostile one is inert text
    assert "[U+202E]" in html and 'class="rs-causal"' in html
    assert res.causal[0].text in html


def test_remediation_removes_exactly_the_traced_characters(case):
    from ragsec_core.traceback.remediate import remediate

    p, trace, res = case
    assert res.attribution
    fix = remediate(p, trace, res.attribution)
    removed = {r.doc_id: r for r in fix.removals}
    before = {d.id: d.text for d in p.corpus.documents}
    after = {d.id: d.text for d in fix.pipeline.corpus.documents}
    for doc_id, r in removed.items():
        assert before[doc_id][r.start : r.end] == r.text
        assert after[doc_id] == before[doc_id][: r.start] + before[doc_id][r.end :]
    assert all(after[i] == before[i] for i in before if i not in removed)
    # unchanged chunks keep their vectors; only the edited document is re-embedded
    old = {c.chunk_id: i for i, c in enumerate(p.retriever.chunks)}
    for j, c in enumerate(fix.pipeline.retriever.chunks):
        if c.doc_id not in removed:
            assert np.array_equal(fix.pipeline.retriever.embeddings[j], p.retriever.embeddings[old[c.chunk_id]])
    assert not overlaps(fix.after.answer, trace.labels.target), fix.after.answer
    assert p.corpus.documents is not fix.pipeline.corpus.documents  # the cached pipeline is untouched
    assert before == {d.id: d.text for d in p.corpus.documents}


def test_attention_views(case, llm):
    from ragsec_core.dscan.detector import analyse_trace
    from ragsec_core.views.attention import (
        doc_layer_weights,
        heatmap_figure,
        token_weights,
    )

    _, trace, _ = case
    res = analyse_trace(trace, llm, n_samples=1, keep_rows=True)
    w = doc_layer_weights(res)
    assert w.shape == (len(trace.spans), res.samples[0].doc_mass.shape[1])
    assert np.allclose(w.sum(axis=0), 1.0)
    ranges = token_weights(res, trace, llm)
    assert len(ranges) == len(trace.spans)
    top = max(x for doc in ranges for _, _, x in doc)
    assert top == pytest.approx(1.0)
    for sp, doc in zip(trace.spans, ranges):
        assert all(0 <= a < b <= sp.end - sp.start for a, b, _ in doc)
    fig = heatmap_figure(w, ["<b>x</b>"] + [str(i) for i in range(1, len(w))], res.implicated)
    assert "&lt;b&gt;" in fig.data[0].y[0]


def test_shipped_detector_carries_the_clean_generation_range():
    from ragsec_core.dscan.detector import Detector

    det = Detector.load()
    assert set(det.clean_range) == set(det.features)
    for lo, mid, hi in det.clean_range.values():
        assert lo <= mid <= hi
    assert 0.0 < det.clean_range["doc_entropy"][0] < det.clean_range["doc_entropy"][2] <= 1.0
