"""`ragsec monitor` / `ragsec bench monitor`: score every chunk of a corpus for signs of targeted poisoning.

Split from `chameleon_bench` (the sweep) to keep modules small; `chameleon_bench` re-exports
`register_monitor` and `default_query_sets`, which the CLI and the investigate view import from there.
Without `--queries`, the sensitive set is the scenarios' target queries and families and the benign set
their benign queries plus the corpus demo queries; the scenarios are the corpus's shipped
`chameleon_scenarios.json` (built-in security scenarios for other corpora).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ragsec_core._util.errors import RagsecError


def register_monitor(subparsers: Any, name: str = "monitor") -> None:
    """Adds the corpus monitor command (`ragsec bench monitor`; the CLI may also mount it top-level)."""
    m = subparsers.add_parser(name, help="score every document of a corpus for signs of targeted poisoning")
    m.add_argument("--corpus", default=None, help="corpus (default: secops)")
    m.add_argument("--variant", default=None, help="poisoned variant of a sample corpus")
    m.add_argument("--queries", default=None,
                   help='JSON {"sensitive": [...], "benign": [...]} (default: the corpus scenario families as '
                        "sensitive, scenario benign queries plus the corpus demo queries as benign)")
    m.add_argument("--alpha", type=float, default=0.5)
    m.add_argument("--k", type=int, default=5)
    m.add_argument("--qpd-threshold", type=float, default=None, help="default 0.20 (secops) / 0.15 (others)")
    m.add_argument("--all", action="store_true", help="list every document, not only flagged ones")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=cmd_monitor)


def _qpd_threshold(value: float | None, corpus_name: str) -> float:
    from ragsec_core.monitor.detectors import QPD_THRESHOLD_GENERAL, QPD_THRESHOLD_TECHNICAL

    if value is not None:
        if not 0 <= value < 1:
            raise RagsecError(f"--qpd-threshold must be in [0, 1) (got {value})")
        return value
    return QPD_THRESHOLD_TECHNICAL if "secops" in corpus_name else QPD_THRESHOLD_GENERAL


def default_query_sets(scenarios, corpus) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    sens = list(dict.fromkeys(q for s in scenarios for q in (s.target_query, *s.sensitive_queries)))
    ben = list(dict.fromkeys([q for s in scenarios for q in s.benign_queries] + [q.query for q in corpus.queries]))
    return sens, ben


# ---------------------------------------------------------------- monitor command

def cmd_monitor(args: argparse.Namespace) -> int:
    from ragsec_core._util.inputs import check_params

    check_params(args.k, args.alpha)
    from ragsec_core.chameleon.scenarios import default_scenario_file, load_scenarios
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.monitor.detectors import load_query_sets

    corpus = load_corpus(args.corpus or "secops", args.variant)
    if args.queries:
        sens, ben = load_query_sets(args.queries)
    else:
        sens, ben = default_query_sets(load_scenarios(default_scenario_file([args.corpus or "secops"])), corpus)
    thr = _qpd_threshold(args.qpd_threshold, corpus.name)
    from ragsec_core.retrieval.embed import Embedder
    from ragsec_core.monitor.detectors import run_monitor
    from ragsec_core.rag import build_retriever
    from ragsec_core._util.text import escape_controls as safe_display

    report = run_monitor(build_retriever(corpus, Embedder()), sens, ben, k=args.k, alpha=args.alpha, qpd_threshold=thr)
    if args.json:
        print(json.dumps(report.to_dict(all_docs=args.all), indent=1))
        return 0
    rows = report.docs if args.all else report.flagged
    print(f"{len(report.flagged)} of {len(report.docs)} chunks flagged (alpha {args.alpha}, k {args.k}, "
          f"QPD threshold {thr}, {len(sens)} sensitive / {len(ben)} benign queries)")
    print(f"{'chunk':<24}{'qpd':>6}{'diff':>6}{'r_sens':>7}{'r_ben':>7}{'kw_idf':>7}{'drift':>7}{'clus':>6}  flags / title")
    for d in rows:
        print(f"{safe_display(d.chunk_id)[:23]:<24}{d.qpd:>6.2f}{d.qpd_differential:>6.2f}{d.sensitive_rate:>7.2f}"
              f"{d.benign_rate:>7.2f}{d.keyword_anomaly:>7.2f}{d.semantic_drift:>7.2f}{d.clustering:>6.2f}  "
              f"{','.join(d.flags) or '-'}  {safe_display(d.title)[:40]}")
    return 0
