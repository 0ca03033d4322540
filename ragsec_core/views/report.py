"""Self-contained HTML report of a Pass-1 artifact (no scripts, no external assets).

An analyst attaches the report to an incident ticket: it must open anywhere offline and must not be a
new attack surface, so every corpus/model string is escaped by `highlight` and the page carries a
Content-Security-Policy that forbids scripts and remote loads even if escaping were ever bypassed.
"""

from __future__ import annotations

import html
from pathlib import Path

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.text import html_visible
from ragsec_core.data.spans import apply_masks
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.artifact import (
    Artifact,
    Step,
    access_line,
    boundary_line,
    caveat_line,
    cost_line,
    prompt_window,
    steps,
)
from ragsec_core.traceback.boundary import REASONS
from ragsec_core.traceback.result import TracebackResult
from ragsec_core.views.highlight import Mark, highlight_html, legend_html, page_html


def chunk_marks(trace: Trace, result: TracebackResult, hit: int) -> list[Mark]:
    """Gold poison, attribution and causal spans of one retrieved chunk, chunk-local."""
    marks = [Mark(a, b, "poison", "known poison (gold label)") for a, b in trace.hits[hit].poison_spans]
    for s in result.attribution:
        if s.hit == hit:
            marks.append(Mark(s.local[0], s.local[1], "attribution", f"attribution span [{s.local[0]}, {s.local[1]})"))
    for s in result.causal:
        if s.hit == hit:
            marks.append(Mark(s.local[0], s.local[1], "causal", f"causal span [{s.local[0]}, {s.local[1]})"))
    return marks


def step_marks(step: Step) -> list[Mark]:
    return [Mark(a, b, "mask", "masked in this replay") for a, b in step.masks]


def _h(text: object) -> str:
    return html_visible(str(text))


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _summary(a: Artifact) -> str:
    t, r = a.trace, a.pass1
    s = t.signals
    rows = [
        ["Trace", _h(t.trace_id)], ["Created", _h(t.created_at)], ["Query", _h(t.query)],
        ["Model", _h(t.model.get("id"))], ["Corpus", _h(t.retrieval.get("corpus"))],
        ["k / alpha", _h(f"{t.retrieval.get('k')} / {t.retrieval.get('alpha')}")],
        ["Signals", _h(f"PAR={s.par} T_ASR={s.t_asr} CONFUSION={s.confusion} UNK={s.abstained}")],
        ["Trigger", _h(f"{r.trigger} ({'fired' if r.triggered else 'did not fire'}), objective {r.objective}, masks by {r.mask_mode}")],
        ["Original answer", _h(r.original_answer)],
        ["Sanitised answer", _h(r.final_answer) + (" <b>(event gone)</b>" if r.resolved else " <b>(event persists)</b>")],
        ["Replayed on", _h(access_line(r))],
        ["Boundary drawn by", _h(boundary_line(r))],
        ["Cost", _h(cost_line(r))],
    ]
    caveat = caveat_line(t, r)
    if caveat:
        rows.append(["Caveat", _h(caveat)])
    return "<h2>Summary</h2>" + _table(["", ""], rows)


def _chunks(a: Artifact) -> str:
    t, r = a.trace, a.pass1
    out = ["<h2>Retrieved chunks in the prompt</h2>", legend_html(["poison", "attribution", "causal"])]
    for i in t.used:
        h = t.hits[i]
        out.append(f"<h3>#{h.rank} {_h(h.chunk_id)} <small>{_h(h.title)}</small></h3>")
        out.append(highlight_html(h.text, chunk_marks(t, r, i)))
    return "".join(out)


def _spans(r: TracebackResult) -> str:
    rows = []
    for kind, spans in (("attribution", r.attribution), ("causal", r.causal)):
        for s in spans:
            rows.append([kind, _h(s.chunk_id), f"[{s.local[0]}, {s.local[1]})", f"[{s.prompt[0]}, {s.prompt[1]})", _h(s.text),
                         "" if s.replacement is None else _h(s.replacement) or "(deleted)", _h(REASONS.get(s.reason, ""))])
    head = ["kind", "chunk", "chunk chars", "prompt chars", "text", "reverted to (snapshot)", "reported by"]
    return "<h2>Spans</h2>" + (_table(head, rows) if rows else "<p>none</p>")


def _steps(a: Artifact) -> str:
    rows, details = [], []
    for st in steps(a.pass1):
        t = st.test
        masked = "; ".join(_h(s.text) for s in t.spans) or "(nothing new)"
        rows.append([str(st.index + 1), str(t.round + 1), _h(t.stage), masked, _h(t.answer),
                     f"{t.influence:.3f}", "yes" if t.success else "no", f"{t.ms:.0f}", "yes" if t.cached else ""])
        lo, hi = prompt_window(a.trace, st)
        view = highlight_html(a.trace.prompt[lo:hi], [Mark(m.start - lo, m.end - lo, m.kind, m.title) for m in step_marks(st)])
        details.append(f"<details><summary>Step {st.index + 1}: {_h(t.stage)}, replayed answer {_h(t.answer)}</summary>{view}</details>")
    header = ["step", "round", "stage", "masked (new)", "replayed answer", "influence", "success", "ms", "cached"]
    return "<h2>Every replay</h2>" + _table(header, rows) + "<h3>Masked prompts</h3>" + "".join(details)


def report_html(a: Artifact) -> str:
    body = (
        "<h1>ragsec traceback report</h1><p>Generated by ragsec from a Pass-1 artifact. All corpus and model "
        "text below is untrusted and shown escaped; invisible characters appear as [U+XXXX] badges.</p>"
        + _summary(a) + _spans(a.pass1) + _chunks(a) + _steps(a)
        + "<h2>Final sanitised prompt (all causal masks applied)</h2>"
        + highlight_html(apply_masks(a.trace.prompt, [c.prompt_span for c in a.pass1.causal], a.pass1.mask_mode,
                                     {c.prompt_span: c.replacement for c in a.pass1.causal if c.replacement is not None}), [])
    )
    return page_html(body, f"ragsec report {a.trace.trace_id}")


def write_report(path: str | Path, a: Artifact) -> Path:
    write_text_atomic(path, report_html(a))
    return Path(path)
