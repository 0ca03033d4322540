"""Plot builders for the app: pure functions from data to a plotly Figure (no streamlit here).

Plotly renders a subset of HTML in hover text, legend names and labels, and every chunk id or text
shown here can come from an attacker-controlled corpus or results file. So every string that reaches a
figure goes through `safe_label`: invisible/bidi characters become visible escapes, then `<`, `>` and `&`
are HTML-escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from ragsec_core._util.text import escape_controls
from ragsec_core.views.retrieval_lab import RankPaths

POISON_COLOR = "#d62728"
CLEAN_COLORS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e", "#e377c2")


def safe_label(text: Any, limit: int = 200) -> str:
    """Plain text for plotly labels/hover: visible control characters, HTML metacharacters escaped."""
    s = escape_controls(str(text))
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return html.escape(s, quote=True)


def _layout(fig: go.Figure, title: str, x: str, y: str, height: int = 420) -> go.Figure:
    fig.update_layout(title=safe_label(title), xaxis_title=safe_label(x), yaxis_title=safe_label(y), height=height,
                      margin={"l": 50, "r": 20, "t": 50, "b": 40}, legend={"font": {"size": 10}})
    return fig


def bump_chart(paths: RankPaths, chosen_alpha: float | None = None) -> go.Figure:
    """Rank (1 at the top) of every chunk that enters any top-K as alpha moves; poisons drawn red and
    dashed, gaps where a chunk is outside the top-K."""
    fig = go.Figure()
    for i, cid in enumerate(paths.order()):
        poison = paths.poisoned.get(cid, False)
        snippet = safe_label(paths.texts.get(cid, ""), 160)
        tag = " [injected]" if paths.injected.get(cid) else " [poison]" if poison else ""
        fig.add_trace(go.Scatter(
            x=paths.alphas, y=paths.ranks[cid], mode="lines+markers", connectgaps=False,
            name=safe_label(cid, 40) + tag,
            line={"color": POISON_COLOR if poison else CLEAN_COLORS[i % len(CLEAN_COLORS)],
                      "width": 4 if poison else 2, "dash": "dash" if poison else "solid"},
            marker={"symbol": "x" if poison else "circle", "size": 9 if poison else 6},
            hovertext=[f"{safe_label(cid, 60)}{tag}<br>{snippet}"] * len(paths.alphas),
            hovertemplate="alpha=%{x}<br>rank=%{y}<br>%{hovertext}<extra></extra>",
        ))
    if chosen_alpha is not None:
        fig.add_vline(x=chosen_alpha, line={"color": "#444", "dash": "dot"})
    _layout(fig, f"Top-{paths.k} ranks as alpha goes 0 (BM25) to 1 (dense)", "alpha (dense weight)", "rank", 460)
    fig.update_yaxes(autorange="reversed", dtick=1, range=[paths.k + 0.5, 0.5])
    return fig


def pair_metrics_figure(metrics: Mapping[str, Sequence[float]], k: int) -> go.Figure:
    """Sleeper/trigger outcome per alpha: co-retrieval and any-retrieval (0/1), benign retrieval rate, stealth."""
    fig = go.Figure()
    styles = {"co_retrieval": ("co-retrieval (both in top-k)", POISON_COLOR, "solid"),
              "any_retrieval": ("any-retrieval", "#ff7f0e", "dot"),
              "benign_retrieval_rate": ("benign retrieval rate", "#1f77b4", "solid"),
              "stealth": ("stealth (benign rate < 0.30)", "#2ca02c", "dash")}
    for key, (name, color, dash) in styles.items():
        if key in metrics:
            fig.add_trace(go.Scatter(x=list(metrics["alpha"]), y=list(metrics[key]), mode="lines+markers", name=name,
                                     line={"color": color, "dash": dash, "shape": "hv" if key != "benign_retrieval_rate" else "linear"}))
    _layout(fig, f"Sleeper/trigger pair across alpha (k={k})", "alpha (dense weight)", "rate / yes=1", 380)
    fig.update_yaxes(range=[-0.05, 1.05])
    return fig


def roc_figure(curves: Mapping[str, Mapping[str, Any]], title: str = "ROC") -> go.Figure:
    """One ROC line per named curve (`fpr`, `tpr`, optional `auc`), with the chance diagonal."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", line={"color": "#bbb", "dash": "dot"}))
    for i, (name, c) in enumerate(curves.items()):
        pts = sorted(zip(c["fpr"], c["tpr"]))
        auc = c.get("auc")
        label = safe_label(name, 60) + (f" (AUC {auc:.3f})" if isinstance(auc, (int, float)) and not math.isnan(auc) else "")
        fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", name=label,
                                 line={"shape": "hv", "color": CLEAN_COLORS[i % len(CLEAN_COLORS)]}, marker={"size": 4}))
    _layout(fig, title, "false positive rate", "true positive rate", 420)
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def traceback_scatter(points: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Char F1 (up is better) vs Char FPR (left is better): colour = method, marker = attack setting."""
    fig = go.Figure()
    methods = list(dict.fromkeys(str(p["method"]) for p in points))
    attacks = list(dict.fromkeys(str(p["attack"]) for p in points))
    symbols = ("circle", "square", "diamond", "triangle-up", "cross", "star", "x", "hexagon")
    for mi, m in enumerate(methods):
        for ai, a in enumerate(attacks):
            sel = [p for p in points if str(p["method"]) == m and str(p["attack"]) == a]
            if not sel:
                continue
            fig.add_trace(go.Scatter(
                x=[p["char_fpr"] for p in sel], y=[p["char_f1"] for p in sel], mode="markers",
                name=f"{safe_label(m, 40)} · {safe_label(a, 60)}",
                marker={"size": 13, "color": CLEAN_COLORS[mi % len(CLEAN_COLORS)], "symbol": symbols[ai % len(symbols)],
                            "line": {"width": 1, "color": "#333"}},
                hovertext=[f"{safe_label(m, 40)}<br>{safe_label(a, 80)}<br>events={safe_label(p.get('events'))}<br>"
                           f"{safe_label(p.get('source', ''), 80)}" for p in sel],
                hovertemplate="Char FPR=%{x:.3f}<br>Char F1=%{y:.3f}<br>%{hovertext}<extra></extra>",
            ))
    _layout(fig, "Traceback: Char F1 vs Char FPR per method and attack", "Char FPR (lower is better)",
            "Char F1 (higher is better)", 440)
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def outcome_bars(outcomes: Mapping[str, Mapping[str, int]]) -> go.Figure:
    """Grouped bars of the Pass-0 outcome counts (EVT, CORRECT, CONFUSION, UNK) per results file."""
    fig = go.Figure()
    for name, counts in outcomes.items():
        fig.add_trace(go.Bar(x=[safe_label(k, 30) for k in counts], y=list(counts.values()), name=safe_label(name, 60)))
    _layout(fig, "Outcome distribution (questions per outcome)", "outcome", "questions", 380)
    fig.update_layout(barmode="group")
    return fig


def auc_bars(aucs: Mapping[str, float], title: str = "D-SCAN AUC") -> go.Figure:
    """Horizontal AUC bars with the chance line, for results that store AUCs but no ROC points."""
    names = [safe_label(n, 60) for n in aucs]
    fig = go.Figure(go.Bar(x=list(aucs.values()), y=names, orientation="h",
                           marker_color=["#d62728" if "this run" in n else "#1f77b4" for n in aucs],
                           text=[f"{v:.3f}" for v in aucs.values()], textposition="auto"))
    fig.add_vline(x=0.5, line={"color": "#888", "dash": "dot"})
    _layout(fig, title, "AUC", "", max(260, 40 + 28 * len(aucs)))
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(autorange="reversed")
    return fig


def line_by_x(series: Mapping[str, Sequence[float]], title: str, x_title: str, y_title: str,
              x: Sequence[Any] | None = None) -> go.Figure:
    """Generic named lines over a shared x (e.g. D-SCAN per-layer AUC)."""
    fig = go.Figure()
    for name, ys in series.items():
        fig.add_trace(go.Scatter(x=list(x) if x is not None else list(range(len(ys))), y=list(ys),
                                 mode="lines+markers", name=safe_label(name, 60)))
    return _layout(fig, title, x_title, y_title, 380)


def chameleon_figure(lines: Mapping[int, Mapping[str, Sequence[float]]], metric: str = "co_retrieval") -> go.Figure:
    """Rate of `metric` vs alpha, one line per k, with the 95 % Wilson interval as error bars."""
    fig = go.Figure()
    for i, (k, d) in enumerate(lines.items()):
        rate = list(d["rate"])
        fig.add_trace(go.Scatter(
            x=list(d["alpha"]), y=rate, mode="lines+markers", name=f"k={int(k)}",
            line={"color": CLEAN_COLORS[i % len(CLEAN_COLORS)]},
            error_y={"type": "data", "symmetric": False, "array": [h - r for h, r in zip(d["hi"], rate)],
                         "arrayminus": [r - lo for r, lo in zip(rate, d["lo"])]},
        ))
    _layout(fig, f"Chameleon: {metric.replace('_', '-')} vs alpha (95 % Wilson intervals)", "alpha (dense weight)",
            metric.replace("_", " ") + " rate", 400)
    fig.update_yaxes(range=[-0.05, 1.05])
    return fig
