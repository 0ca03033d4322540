"""Scoring and tabulating traceback methods on shared benchmark events (RAGCharacter Tables 5 and 7).

Every method's spans are moved to prompt coordinates and scored against the gold spans inside the
prompt-used chunks. Chunks a method suspects outside the prompt cannot be scored at character level;
they are counted (`outside`) but add no predicted characters.
"""

from __future__ import annotations

import statistics
from typing import Any

from ragsec_core._util.stats import mean_interval
from ragsec_core.data.trace import Trace
from ragsec_core.traceback.baselines import MethodResult
from ragsec_core.traceback.metrics import char_scores

METRICS = ("char_f1", "char_iou", "char_fpr", "chunk_acc", "passage_f1", "calls_per_event", "fpe_per_event",
           "seconds_per_event")
TOP_K_SOURCES = 5  # passage-level scores read a method's top-5 suspected passages (TracLLM's convention)
PAPER_GROUP = {"ppl": "Table 5", "ragforensics": "Table 5", "ragorigin": "Table 5", "robustrag": "Table 5",
               "ppl-char": "Table 7", "ragforensics-char": "Table 7", "ragorigin-char": "Table 7",
               "ragcharacter": "Ours", "contextcite": "Peer", "tracllm": "Peer"}


def gold_spans(trace: Trace) -> list[tuple[int, int]]:
    """The planted characters inside the prompt-used chunks, in prompt coordinates."""
    return trace.in_prompt((i, (a, b)) for i in trace.used for a, b in trace.hits[i].poison_spans)


def score(trace: Trace, res: MethodResult) -> dict[str, Any]:
    """One method on one event: character scores in prompt coordinates, top-chunk hit, cost."""
    gold = gold_spans(trace)
    pred = trace.in_prompt(res.spans)
    sc = char_scores(pred, gold)
    top = res.chunks[0] if res.chunks else None
    return {
        "char_f1": sc.f1, "char_iou": sc.iou, "char_fpr": sc.fpr,
        "chunk_hit": bool(top is not None and trace.hits[top].poison_spans),
        **passage_scores(trace, res.chunks),
        "calls": res.calls, "seconds": round(res.seconds, 3),
        "fpe": round(res.forward_pass_equivalents(int(trace.timing.get("prompt_tokens") or 0)), 3),
        "suspected": [trace.hits[i].chunk_id for i in res.chunks], "outside": len(res.outside),
        "spans": [[a, b] for a, b in pred], "gold_chars": sum(b - a for a, b in gold),
        "pred_chars": sum(b - a for a, b in pred), "details": res.details,
    }


def passage_scores(trace: Trace, chunks: list[int]) -> dict[str, float]:
    """Precision / recall / F1 of the top-k suspected passages against the poisoned prompt passages."""
    pred = set(chunks[:TOP_K_SOURCES])
    gold = {i for i in trace.used if trace.hits[i].poison_spans}
    tp = len(pred & gold)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(gold) if gold else 0.0
    return {"passage_precision": round(p, 4), "passage_recall": round(r, 4),
            "passage_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}


def summarise_method(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over a method's events, the Char F1 mean's 95 % interval, and the cost per event. Rows of
    result files written before a metric existed lack its key: the mean reads the rows that have it."""
    def mean(key: str) -> float | None:
        have = [r[key] for r in rows if key in r]
        return round(statistics.fmean(have), 4) if have else None

    return {
        "events": len(rows), "char_f1": mean("char_f1"), "char_f1_ci95": mean_interval([r["char_f1"] for r in rows]),
        "char_iou": mean("char_iou"), "char_fpr": mean("char_fpr"), "chunk_acc": mean("chunk_hit"),
        "passage_precision": mean("passage_precision"), "passage_recall": mean("passage_recall"),
        "passage_f1": mean("passage_f1"), "calls_per_event": mean("calls"), "fpe_per_event": mean("fpe"),
        "seconds_per_event": mean("seconds"),
    }


def summarise_methods(events: list[dict[str, Any]], methods: list[str]) -> dict[str, dict[str, Any]]:
    return {m: summarise_method([e["methods"][m] for e in events if m in e.get("methods", {})]) for m in methods}


def print_methods_table(summary: dict[str, dict[str, Any]]) -> None:
    """Method x (Char F1 / IoU / FPR, chunk accuracy, calls and seconds per event), paper group noted."""
    head = f"{'method':<18} {'paper':<8} {'events':>6} " + " ".join(f"{c:>17}" for c in METRICS)
    print(head)
    print("-" * len(head))
    for m, s in summary.items():
        cells = " ".join(f"{'-' if s[c] is None else s[c]:>17}" for c in METRICS)
        print(f"{m:<18} {PAPER_GROUP.get(m, ''):<8} {s['events']:>6} {cells}")
