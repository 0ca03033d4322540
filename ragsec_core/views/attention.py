"""What the app draws from a D-SCAN analysis: documents x layers density, and token shading per passage.

Both views use the greedy answer (sample 1, the Pass-0 answer) only: it is the generation the analyst is
investigating; the other samples feed the consistency features, not the picture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragsec_core._util.text import escape_controls
from ragsec_core.data.trace import Trace
from ragsec_core.dscan.detector import Detector, DscanResult, surrogate_prompt
from ragsec_core.models.attention import map_prompt

if TYPE_CHECKING:
    import plotly.graph_objects as go


def doc_layer_weights(result: DscanResult) -> np.ndarray:
    """(K documents, L layers): each layer's length-normalised attention density Attn(D_k), renormalised
    over documents so a column reads "share of this layer's per-token attention that each document gets"."""
    s = result.samples[0]
    dens = s.doc_mass.mean(axis=0) / np.maximum(s.doc_lengths, 1)[None, :]  # (L, K)
    total = dens.sum(axis=1, keepdims=True)
    return (dens / np.where(total > 0, total, 1.0)).T


def token_weights(result: DscanResult, trace: Trace, llm: object) -> list[list[tuple[int, int, float]]]:
    """Per used document (trace.spans order), chunk-local character ranges of its tokens with their
    attention from the answer (mean over answer tokens, the detector's layer band and heads), scaled by the
    largest token weight over all documents so shading is comparable across passages."""
    if not result.attention:
        raise ValueError("token shading needs the raw attention rows: analyse with keep_rows=True")
    rows = result.attention[0].rows  # (T, L, H, P)
    band = result.layers or list(range(rows.shape[1]))
    per_token = rows[:, band].mean(axis=(0, 1, 2))  # (P,)
    prompt, shift = surrogate_prompt(trace, llm)  # the prompt the analysing model read
    pmap = map_prompt(llm, prompt, [(s.start + shift, s.end + shift) for s in trace.spans])
    peak = max((float(per_token[t].max()) for t in pmap.doc_tokens if len(t)), default=0.0) or 1.0
    out = []
    for span, toks in zip(trace.spans, pmap.doc_tokens):
        ranges = []
        start, end = span.start + shift, span.end + shift
        for t in toks:
            a, b = pmap.offsets[int(t)]
            ranges.append((max(0, a - start), min(end, b) - start, float(per_token[int(t)]) / peak))
        out.append(ranges)
    return out


@dataclass(frozen=True)
class EntropyContext:
    value: float
    clean_low: float | None  # 5th percentile over the detector's clean training generations
    clean_median: float | None
    clean_high: float | None  # 95th percentile

    @property
    def below_clean(self) -> bool | None:
        """Lower entropy than 95 % of clean generations: attention collapsed onto few documents."""
        return None if self.clean_low is None else self.value < self.clean_low


def entropy_context(result: DscanResult, detector: Detector, feature: str = "doc_entropy") -> EntropyContext:
    rng = detector.clean_range.get(feature)
    value = float(result.features[feature])
    return EntropyContext(value, *(rng if rng else (None, None, None)))


CONTROL_LABELS = {  # how the help names each evaluation pair of `bench dscan` (bench.dscan_pairs.CONTROL_PAIRS)
    "plain": "benign passages",
    "length_matched": "benign passages cut to the poison's length",
    "question_matched": "benign passages that restate the question (FAQ-style)",
    "text": "poisons that do not restate the question",
    "text_question_matched": "poisons without the question vs FAQ-style benign passages",
}


def _evaluations(detector: Detector) -> list[tuple[str, str, dict]]:
    """(kind, data set, figures by pair) of every evaluation the detector file carries: its out-of-fold
    figures first, then each transfer data set; blocks without per-pair figures are left out."""
    info = detector.info
    blocks = [("out-of-fold", str(info.get("trained_on", "its training data")), info.get("evaluation"))]
    blocks += [("transfer", str(name), ev) for name, ev in sorted(_as_dict(info.get("transfer")).items())]
    out = []
    for kind, data, block in blocks:
        by = {k: v for k, v in _as_dict(_as_dict(block).get("by_control")).items() if isinstance(v, dict)}
        if by:
            out.append((kind, data, by))
    return out


def detector_help(detector: Detector) -> str:
    """What P(poisoned) means for this detector, in figures read from its own file (`info.evaluation`,
    out-of-fold on its training data, and `info.transfer`, other data sets), so the app never shows a
    figure that belongs to another detector. Plain text: it goes into a tooltip."""
    info = detector.info
    lines = [f"Shipped D-SCAN detector for {detector.model or 'the default model'}: N = {detector.n_samples} samples, "
             f"layers {detector.band or 'all'}, flags P >= {detector.threshold:.2f}"
             + (f" ({info['threshold_rule']})." if info.get("threshold_rule") else ".")]
    for kind, data, by in _evaluations(detector):
        title = f"Out-of-fold on {data}" if kind == "out-of-fold" else f"Transfer to {data}"
        parts = [f"{CONTROL_LABELS.get(k, k)}: AUC {_num(v.get('auc'), '.2f')}, flags {_num(v.get('tpr'), '.0%')} of "
                 f"poisoned and {_num(v.get('fpr'), '.0%')} of clean" for k, v in by.items()]
        lines.append(f"{title}: " + "; ".join(parts) + ".")
    if len(lines) == 1:
        lines.append("This detector file carries no evaluation figures: retrain it with `ragsec bench dscan --train-controls`.")
    return " ".join(lines)


def detector_table(detector: Detector) -> str:
    """Markdown table of the detector's own evaluation figures (out-of-fold, then each transfer data set):
    what docs/dscan.md and the README show, generated from the file (`ragsec detector --markdown`) and
    compared with it by a test, so the docs cannot drift from the shipped detector."""
    info = detector.info
    lines = [f"Shipped detector: N = {detector.n_samples}, layers {detector.band}, threshold {detector.threshold:.4f}"
             + (f" ({info['threshold_rule']})" if info.get("threshold_rule") else ""), "",
             "| data | pair | AUC | TPR at threshold | FPR at threshold | prompts |", "|---|---|---|---|---|---|"]
    for kind, data, by in _evaluations(detector):
        for pair, v in by.items():
            lines.append(f"| {data} ({kind}) | {pair} | {_num(v.get('auc'), '.3f')} | {_num(v.get('tpr'), '.0%')} "
                         f"| {_num(v.get('fpr'), '.0%')} | {v.get('prompts', '-')} |")
    return "\n".join(lines) + "\n"


def _as_dict(x: object) -> dict:
    return x if isinstance(x, dict) else {}


def _num(x: object, spec: str) -> str:
    """A figure from the file in `spec`, or '-' where the file holds none."""
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def heatmap_figure(weights: np.ndarray, doc_labels: list[str], implicated: int | None = None) -> go.Figure:
    """Plotly heatmap, documents x layers. Labels come from the corpus: they are HTML-escaped here,
    because plotly renders a subset of HTML in tick labels and hover text."""
    import html

    import plotly.graph_objects as go


    names = [html.escape(escape_controls(s)) + (" ◀" if i == implicated else "") for i, s in enumerate(doc_labels)]
    fig = go.Figure(
        go.Heatmap(
            z=weights, x=list(range(weights.shape[1])), y=names, colorscale="Blues", zmin=0, zmax=float(max(weights.max(), 1e-9)),
            colorbar={"title": "share"}, hovertemplate="layer %{x}<br>%{y}<br>share %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(xaxis_title="layer", yaxis_title="document (rank · chunk)", yaxis_autorange="reversed",
                      yaxis_type="category",
                      height=120 + 40 * len(names), margin={"l": 10, "r": 10, "t": 30, "b": 40})
    return fig
