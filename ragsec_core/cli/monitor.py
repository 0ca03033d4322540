"""`ragsec monitor` (also `ragsec bench monitor`): score every chunk of a corpus for signs of targeted
poisoning and print the flagged ones.

Without `--queries`, the sensitive set is the scenarios' target queries and families and the benign set
their benign queries plus the corpus demo queries; the scenarios are the corpus's shipped
`chameleon_scenarios.json` (built-in security scenarios for other corpora).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ragsec_core.cli.display import visible
from ragsec_core.cli.options import add_corpus_args, add_retrieval_args, check_retrieval_args


def add_monitor_parser(subparsers: Any, name: str = "monitor") -> None:
    """Adds the corpus monitor command under `name` (top-level and under `bench`)."""
    m = subparsers.add_parser(name, help="score every document of a corpus for signs of targeted poisoning")
    add_corpus_args(m, help="corpus (default: secops)")
    m.add_argument("--queries", default=None,
                   help='JSON {"sensitive": [...], "benign": [...]} (default: the corpus scenario families as '
                        "sensitive, scenario benign queries plus the corpus demo queries as benign)")
    add_retrieval_args(m)
    m.add_argument("--qpd-threshold", type=float, default=None, help="default 0.20 (secops) / 0.15 (others)")
    m.add_argument("--all", action="store_true", help="list every document, not only flagged ones")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=cmd_monitor)


def cmd_monitor(args: argparse.Namespace) -> int:
    check_retrieval_args(args)
    from ragsec_core.chameleon.scenarios import default_scenario_file, load_scenarios
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.monitor.detectors import default_query_sets, load_query_sets, qpd_threshold, run_monitor
    from ragsec_core.rag import build_retriever
    from ragsec_core.retrieval.embed import Embedder

    corpus = load_corpus(args.corpus or "secops", args.variant)
    if args.queries:
        sens, ben = load_query_sets(args.queries)
    else:
        sens, ben = default_query_sets(load_scenarios(default_scenario_file([args.corpus or "secops"])), corpus)
    thr = qpd_threshold(args.qpd_threshold, corpus.name)
    report = run_monitor(build_retriever(corpus, Embedder(), index=args.index, build_index=args.index_build), sens, ben, k=args.k, alpha=args.alpha, qpd_threshold=thr)
    if args.json:
        print(json.dumps(report.to_dict(all_docs=args.all), indent=1))
        return 0
    rows = report.docs if args.all else report.flagged
    print(f"{len(report.flagged)} of {len(report.docs)} chunks flagged (alpha {args.alpha}, k {args.k}, "
          f"QPD threshold {thr}, {len(sens)} sensitive / {len(ben)} benign queries)")
    print(f"{'chunk':<24}{'qpd':>6}{'diff':>6}{'r_sens':>7}{'r_ben':>7}{'kw_idf':>7}{'drift':>7}{'clus':>6}  flags / title")
    for d in rows:
        print(f"{visible(d.chunk_id)[:23]:<24}{d.qpd:>6.2f}{d.qpd_differential:>6.2f}{d.sensitive_rate:>7.2f}"
              f"{d.benign_rate:>7.2f}{d.keyword_anomaly:>7.2f}{d.semantic_drift:>7.2f}{d.clustering:>6.2f}  "
              f"{','.join(d.flags) or '-'}  {visible(d.title)[:40]}")
    return 0
