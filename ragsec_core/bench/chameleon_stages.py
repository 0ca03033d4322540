"""The later stages of `ragsec bench chameleon`, each run on the pairs of the main sweep (or, for the joint
attack, on pairs of its own): the joint sparse + dense attack, keyword injection, the corpus monitor's
detectors, and end-to-end delivery through the local LLM. Each stage adds one key to the results and saves;
`bench/chameleon.py` runs them in order.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from ragsec_core._util.text import tokenize
from ragsec_core.chameleon.attack import KEYWORD_DENSITIES, KEYWORD_STRATEGIES, inject_keywords, query_keywords
from ragsec_core.chameleon.evaluate import aggregate, build_pair, end_to_end, evaluate_retrieval, inject, rate
from ragsec_core.data.corpus import Chunk
from ragsec_core.monitor.detectors import default_query_sets, evaluate, run_monitor
from ragsec_core.rag import Pipeline

if TYPE_CHECKING:
    from ragsec_core.bench.chameleon_sweep import Sweep
    from ragsec_core.chameleon.scenarios import Scenario
    from ragsec_core.retrieval.hybrid import HybridRetriever

JOINT_ALPHAS = (0.7, 0.5, 0.3)


@dataclass(frozen=True)
class Planted:
    """One finished trial's documents: what every later stage needs (texts, not optimiser state), so a
    resumed run rebuilds them from its results file."""

    trial: int
    scenario: Scenario
    seed: int
    sleeper: str
    trigger: str


def evaluate_both(retriever: HybridRetriever, compare: HybridRetriever | None, sleeper: str, trigger: str,
                  sc: Scenario, stealth_threshold: float, **grid: Any) -> dict[str, Any]:
    """The pair's retrieval through the run's index and, with --compare-in-process, through ragsec's own
    (`compare`): the same documents, so any difference is the store's."""
    out = {"retrieval": evaluate_retrieval(inject(retriever, sleeper, trigger), sc,
                                           stealth_threshold=stealth_threshold, **grid)}
    if compare is not None:
        out["retrieval_in_process"] = evaluate_retrieval(inject(compare, sleeper, trigger), sc,
                                                         stealth_threshold=stealth_threshold, **grid)
    return out


def run_joint(sw: Sweep, done: list[dict[str, Any]]) -> None:
    """The joint sparse + dense attack against each hybrid alpha (k = 5); `done`: rows of an earlier run."""
    args = sw.args
    n_joint = args.trials if args.joint_trials is None else args.joint_trials
    joint: dict[str, Any] = {"alphas": list(JOINT_ALPHAS), "k": 5, "trials": [r for r in done if r["trial"] < n_joint]}
    have = {r["trial"] for r in joint["trials"]}
    for i in tqdm([i for i in range(n_joint) if i not in have], desc="joint trials", file=sys.stderr):
        if sw.out_of_time():
            joint["truncated"] = f"time limit hit after {len(joint['trials'])} trials"
            break
        sc, seed = sw.trial(i)
        row: dict[str, Any] = {"trial": i, "scenario": sc.name, "seed": seed, "configs": {}}
        for a in JOINT_ALPHAS:
            pair = build_pair(sc, sw.encoder, sw.corpus_emb, method="joint", vocab=sw.vocab, alpha=a, seed=seed,
                              **sw.common)
            ev = evaluate_both(sw.retriever, sw.compare, pair.sleeper.text, pair.trigger.text, sc,
                               args.stealth_threshold, alphas=(a,), ks=(5,))
            row["configs"][f"alpha={a}"] = {**ev["retrieval"][f"alpha={a},k=5"], "optimisation": pair.summary(),
                                            "sleeper": pair.sleeper.text, "trigger": pair.trigger.text}
            if "retrieval_in_process" in ev:
                row["configs"][f"alpha={a}"]["in_process"] = ev["retrieval_in_process"][f"alpha={a},k=5"]
        joint["trials"].append(row)
        joint["trials"].sort(key=lambda r: r["trial"])
        _publish_joint(sw, joint)
        sw.save("joint")
    _publish_joint(sw, joint)  # also when every trial came from the earlier run


def _publish_joint(sw: Sweep, joint: dict[str, Any]) -> None:
    """The joint results with their aggregates over the trials so far."""
    if joint["trials"]:
        joint["aggregate"] = {f"alpha={a}": _joint_aggregate(joint["trials"], a) for a in JOINT_ALPHAS}
    sw.results["joint"] = joint


def _joint_aggregate(trials: list[dict[str, Any]], a: float) -> dict[str, Any]:
    """Rates at one alpha plus the mean initial and final dense and sparse scores of both documents."""
    opt = [t["configs"][f"alpha={a}"]["optimisation"][d] for t in trials for d in ("sleeper", "trigger")]
    out = {**aggregate([{"x": t["configs"][f"alpha={a}"]} for t in trials])["x"],
           **{f"mean_{w}_{s}": float(np.mean([o[f"{s}_{w}"] for o in opt]))
              for w in ("initial", "final") for s in ("dense", "sparse")}}
    if all("in_process" in t["configs"][f"alpha={a}"] for t in trials):
        out["in_process"] = aggregate([{"x": t["configs"][f"alpha={a}"]["in_process"]} for t in trials])["x"]
    return out


def tfidf_top(retriever: HybridRetriever, query: str, n: int = 8) -> list[str]:
    """Top tf-idf terms of the target query's BM25 top-5 chunks (document frequencies from BM25's index)."""
    hits = retriever.search(query, k=5, alpha=0.0)
    tf: Counter[str] = Counter(t for h in hits for t in tokenize(h.chunk.text) if t.isalpha())
    m = retriever.bm25.matrix
    n_docs, col_df = m.shape[0], np.bincount(m.indices, minlength=m.shape[1])
    score = {t: c * math.log(n_docs / col_df[retriever.bm25.vocab[t]]) for t, c in tf.items() if t in retriever.bm25.vocab}
    return [t for t, _ in sorted(score.items(), key=lambda x: -x[1])[:n]]


def run_keyword_injection(sw: Sweep, pairs: list[Planted]) -> None:
    """Keywords injected into the optimised pairs, by strategy and density (hybrid alphas, k = 5)."""
    args = sw.args
    n_kw = len(pairs) if args.keyword_trials is None else min(args.keyword_trials, len(pairs))
    kw_rows: dict[str, list[Any]] = {}
    rng = np.random.default_rng(args.seed)
    for p in tqdm(pairs[:n_kw], desc="keyword injection", file=sys.stderr):
        if sw.out_of_time():
            sw.results.setdefault("keyword_injection_truncated", "time limit hit")
            break
        sc = p.scenario
        sources = {
            "query_keywords": list(query_keywords(sc.target_query)),
            "tfidf_top": tfidf_top(sw.retriever, sc.target_query),
            "attack_keywords": list(sc.attack_keywords),
            "random_corpus": [sw.vocab[j] for j in rng.choice(len(sw.vocab), 10, replace=False)],
        }
        for strat in KEYWORD_STRATEGIES:
            for dens in KEYWORD_DENSITIES:
                s_txt = inject_keywords(p.sleeper, sources[strat], dens, seed=p.seed)
                t_txt = inject_keywords(p.trigger, sources[strat], dens, seed=p.seed + 1, protected=sc.payload)
                ev = evaluate_retrieval(inject(sw.retriever, s_txt, t_txt), sc, alphas=JOINT_ALPHAS, ks=(5,),
                                        stealth_threshold=args.stealth_threshold)
                kw_rows.setdefault(f"{strat},density={dens}", []).append(ev)
    sw.results["keyword_injection"] = {
        "densities": list(KEYWORD_DENSITIES), "strategies": list(KEYWORD_STRATEGIES), "n_pairs": n_kw,
        "by_config": {key: aggregate(rows) for key, rows in kw_rows.items()},
        "any_co_retrieval": (any(r["co_retrieval"] for rows in kw_rows.values() for ev in rows for r in ev.values())
                             if kw_rows else None),
    }
    sw.save("keyword_injection")


def run_detectors(retriever: HybridRetriever, planted: list[tuple[str, str]], sens: list[str], ben: list[str],
                  qpd_thr: float, queries_per_day: int) -> dict:
    """Every detector on the corpus with the given (sleeper, trigger) pairs planted, at alpha 1.0 and 0.5.

    One pair per scenario: planting every trial's pair would add near-copies of the same two documents
    (trials of a scenario differ by a few words), which lowers their own idf and makes them co-retrieve each
    other, so keyword anomaly and clustering would measure the duplication instead of the attack."""
    extra, poisoned = [], set()
    for i, (sleeper, trigger) in enumerate(planted):
        for role, text in (("sleeper", sleeper), ("trigger", trigger)):
            did = f"chameleon-{i}-{role}"
            extra.append(Chunk(f"{did}#0", did, text, 0, len(text)))
            poisoned.add(did)
    marked = retriever.extended(extra)
    det: dict = {"queries": {"sensitive": len(sens), "benign": len(ben)}, "n_pairs": len(planted)}
    for a in (1.0, 0.5):
        rep = run_monitor(marked, sens, ben, k=5, alpha=a, qpd_threshold=qpd_thr)
        ev = evaluate(rep, poisoned, queries_per_day=queries_per_day)
        ev["flag_counts"] = {f: sum(f in d.flags for d in rep.docs) for f in ("qpd", "keyword_anomaly", "semantic_drift", "clustering")}
        ev["flagged_poison"] = sorted({d.doc_id for d in rep.docs if d.flags and d.doc_id in poisoned})
        det[f"alpha={a},k=5"] = ev
    return det


def first_per_scenario(pairs: list[Planted]) -> list[Planted]:
    """The first finished pair of each scenario, in trial order."""
    seen: dict[str, Planted] = {}
    for p in pairs:
        seen.setdefault(p.scenario.name, p)
    return list(seen.values())


def run_detector_stage(sw: Sweep, pairs: list[Planted], qpd_thr: float) -> None:
    """The corpus monitor on the corpus with the first pair of each scenario planted."""
    sens, ben = default_query_sets(sw.scenarios, sw.corpus)
    planted = [(p.sleeper, p.trigger) for p in first_per_scenario(pairs)]
    sw.results["detectors"] = run_detectors(sw.retriever, planted, sens, ben, qpd_thr, sw.args.queries_per_day)
    sw.save("detectors")


def run_end_to_end(sw: Sweep, pairs: list[Planted]) -> None:
    """The first pair of each scenario (up to --e2e-scenarios) through the local LLM: is the canary delivered?"""
    args, llm = sw.args, sw.llm
    assert llm is not None  # loaded in cmd_chameleon unless both --no-fluency and --no-e2e
    pipe = Pipeline(sw.corpus, sw.retriever, llm)
    limit = len(sw.scenarios) if args.e2e_scenarios is None else args.e2e_scenarios
    rows = [{"scenario": p.scenario.name, "seed": p.seed,
             **end_to_end(pipe, sw.retriever, p.scenario, p.sleeper, p.trigger, max_new_tokens=args.e2e_tokens)}
            for p in tqdm(first_per_scenario(pairs)[:limit], desc="end-to-end", file=sys.stderr)]
    n = len(rows)
    sw.results["end_to_end"] = {
        "model": llm.model_id, "n": n, "max_new_tokens": args.e2e_tokens, "scenarios": rows,
        "attack_success": rate(sum(r["poisoned"]["success"] for r in rows), n),
        "sleeper_only_success": rate(sum(r["sleeper_only"]["success"] for r in rows), n),
        "clean_success": rate(sum(r["clean"]["success"] for r in rows), n),
        "mean_leakage": float(np.mean([r["poisoned"]["leakage"] for r in rows])) if n else None,
        "mean_divergence": float(np.mean([r["divergence"] for r in rows])) if n else None,
    }
    sw.save("end_to_end")


def print_summary(results: dict, out_path: Any) -> None:
    cfg = results["config"]
    print(f"corpus {cfg['corpus']} ({cfg['n_chunks']} chunks), {cfg.get('n_trials', 0)} trials "
          f"(effective n {cfg.get('effective_n', 0)} scenarios), method {cfg['method']}")
    print(f"{'config':<16}{'co-ret':>16}{'any':>16}{'stealth':>16}{'overall':>16}")
    for key, row in results.get("by_alpha_k", {}).items():
        cells = [f"{row[m]['count']}/{row[m]['n']} ({100 * row[m]['rate']:.0f}%)" for m in ("co_retrieval", "any_retrieval", "stealth", "overall")]
        print(f"{key:<16}" + "".join(f"{c:>16}" for c in cells))
    if agree := results.get("index_agreement"):
        print(f"store vs in-process: {agree['equal']}/{agree['cells']} outcomes equal")
    for key, row in results.get("joint", {}).get("aggregate", {}).items():
        print(f"joint {key}: co-ret {row['co_retrieval']['count']}/{row['co_retrieval']['n']}, "
              f"stealth {row['stealth']['count']}/{row['stealth']['n']}, overall {row['overall']['count']}/{row['overall']['n']}")
    e2e = results.get("end_to_end")
    if e2e and e2e.get("n"):
        print(f"end-to-end ({e2e['model']}): attack success {e2e['attack_success']['count']}/{e2e['n']}, "
              f"sleeper-only {e2e['sleeper_only_success']['count']}/{e2e['n']}, leakage {e2e['mean_leakage']:.2f}, "
              f"divergence {e2e['mean_divergence']:.2f}")
    print(f"results: {out_path}")
