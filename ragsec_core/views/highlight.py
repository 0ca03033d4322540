"""HTML highlighting of attacker-controlled text, built from escaped text only.

Passages and answers are written by whoever poisoned the corpus, so every character goes through
`_util.text.html_visible` (HTML-escaped, invisible and bidi characters turned into visible `[U+XXXX]` badges)
before any markup is added around it; the only tags in the output are the ones built here. Views
(Streamlit pages, the HTML report) render this output and nothing else as HTML.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from ragsec_core._util.text import escape_controls, html_visible

# Kinds of marks and how they look; a later kind in this order wins where marks overlap.
MARK_STYLES: dict[str, str] = {
    "poison": "background:#fde68a;",  # gold (known) poison span
    "attribution": "background:#fca5a5;",  # reported attribution span
    "mask": "background:#d1d5db;text-decoration:line-through;",  # masked in this replay
    "causal": "background:#ef4444;color:#fff;",  # minimal causal span
}

CSS = """
.rs-text{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:0.85rem;white-space:pre-wrap;
 word-break:break-word;line-height:1.5;border:1px solid #e5e7eb;border-radius:6px;padding:0.6rem;margin:0.2rem 0}
.rs-text mark{padding:0;border-radius:2px}
.rs-text .hidden-char{background:#7c3aed;color:#fff;border-radius:3px;padding:0 2px;font-size:0.75em}
.rs-legend span{margin-right:0.8rem;padding:0 4px;border-radius:2px;font-size:0.8rem}
"""


@dataclass(frozen=True)
class Mark:
    start: int
    end: int
    kind: str  # a key of MARK_STYLES
    title: str = ""


def _boundaries(n: int, marks: Sequence[Mark]) -> list[int]:
    cuts = {0, n}
    for m in marks:
        cuts.add(max(0, min(n, m.start)))
        cuts.add(max(0, min(n, m.end)))
    return sorted(cuts)


def highlight_html(text: str, marks: Sequence[Mark]) -> str:
    """`text` with each marked range wrapped in a styled `<mark>`; overlapping marks resolve by kind order."""
    order = {k: i for i, k in enumerate(MARK_STYLES)}
    for m in marks:
        if m.kind not in order:
            raise ValueError(f"unknown mark kind {m.kind!r}")
    cuts = _boundaries(len(text), marks)
    out = []
    for a, b in pairwise(cuts):
        piece = html_visible(text[a:b])
        covering = [m for m in marks if m.start <= a and b <= m.end and m.start < m.end]
        if not covering:
            out.append(piece)
            continue
        top = max(covering, key=lambda m: order[m.kind])
        title = html.escape(top.title or top.kind, quote=True)
        out.append(f'<mark class="rs-{top.kind}" style="{MARK_STYLES[top.kind]}" title="{title}">{piece}</mark>')
    return f'<div class="rs-text">{"".join(out)}</div>'


def shade_html(text: str, weights: Sequence[tuple[int, int, float]], color: str = "37,99,235") -> str:
    """`text` with character ranges shaded by a weight in [0, 1] (token-level attention inside a passage)."""
    cuts = {0, len(text)}
    for a, b, _ in weights:
        cuts.update((max(0, min(len(text), a)), max(0, min(len(text), b))))
    bounds = sorted(cuts)
    out = []
    for a, b in pairwise(bounds):
        w = max((x for s, e, x in weights if s <= a and b <= e and s < e), default=0.0)
        piece = html_visible(text[a:b])
        if w <= 0.02:
            out.append(piece)
        else:
            alpha = round(min(1.0, max(0.0, w)) * 0.85, 3)
            out.append(f'<span style="background:rgba({color},{alpha})" title="{w:.3f}">{piece}</span>')
    return f'<div class="rs-text">{"".join(out)}</div>'


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:=^")


def escape_markdown(text: str) -> str:
    """Backslash-escape markdown/LaTeX syntax (and make control characters visible) so an untrusted
    string inside `st.error` / `st.caption` / a widget label, which render markdown, stays literal text:
    no links, images or formatting from a crafted file name, chunk id or message."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in escape_controls(text))


def plain_label(text: str, limit: int = 80) -> str:
    """`escape_markdown` for a short label: long text is cut before escaping."""
    t = escape_controls(text)
    return escape_markdown(t if len(t) <= limit else t[: limit - 1] + "…")


def legend_html(kinds: Sequence[str]) -> str:
    items = "".join(f'<span style="{MARK_STYLES[k]}">{k}</span>' for k in kinds)
    return f'<div class="rs-legend">{items}</div>'


def page_html(body: str, title: str) -> str:
    """A self-contained HTML document (inline CSS, no scripts, no external assets)."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title><style>{CSS}"
        "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#111}"
        "table{border-collapse:collapse;font-size:0.85rem}td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top}"
        f"</style></head><body>{body}</body></html>\n"
    )
