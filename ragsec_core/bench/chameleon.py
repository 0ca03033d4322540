"""`ragsec bench chameleon`: the Semantic Chameleon sweep.

The sweep: n seeded trials (trial i attacks scenario i mod S with seed base + i div S), each builds a
sleeper/trigger pair against MiniLM, injects it into the corpus and measures co-retrieval, any-retrieval,
stealth and overall success for alpha in {1.0, 0.7, 0.5, 0.3} and k in {5, 10}; then the later stages of
`bench/chameleon_stages.py` (joint attack, keyword injection, detectors, end-to-end). Everything goes to
one JSON, written atomically after every trial and stage. A run interrupted before "done" resumes from it:
finished trials (main and joint) are kept, the rest run, the cheap later stages are redone. With `--index`
a store serves the dense side; `--compare-in-process` also evaluates every pair on ragsec's own index.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.paths import shared_data_dir
from ragsec_core._util.safeio import read_json
from ragsec_core.bench.chameleon_stages import (
    Planted,
    evaluate_both,
    print_summary,
    run_detector_stage,
    run_end_to_end,
    run_joint,
    run_keyword_injection,
)
from ragsec_core.bench.chameleon_sweep import Engines, Sweep
from ragsec_core.bench.fanout import Failed, check_index, connected, pin_threads, ray_map, serial_map, shippable
from ragsec_core.chameleon.evaluate import ALPHAS, KS, aggregate, build_pair, rate, vector_vs_hybrid
from ragsec_core.chameleon.options import METRICS
from ragsec_core.chameleon.scenarios import default_scenario_file, load_scenarios
from ragsec_core.data.corpus import Corpus, load_corpus
from ragsec_core.monitor.detectors import qpd_threshold

if TYPE_CHECKING:
    pass

SHARED_REFERENCE = shared_data_dir() / "semantic_chameleon"
# Settings a resumed run must share with the run it continues (trial counts, stages and limits may change).
RESUME_KEY = ("corpus", "n_chunks", "scenarios", "method", "iterations", "candidates", "max_modified", "ppl_cap",
              "sleeper_form", "stealth_threshold", "seed", "embedder", "index", "compare_in_process")


# ---------------------------------------------------------------- helpers

def _check_common(args: argparse.Namespace) -> None:
    check_index(args)
    if args.trials < 0 or (args.trials == 0 and not args.joint_trials):
        raise RagsecError(f"--trials must be >= 1 (got {args.trials}; 0 only with --joint-trials N)")
    for name in ("iterations", "candidates", "e2e_tokens"):
        if getattr(args, name) < 1:
            raise RagsecError(f"--{name.replace('_', '-')} must be >= 1 (got {getattr(args, name)})")
    if not 0 < args.max_modified <= 1:
        raise RagsecError(f"--max-modified must be in (0, 1] (got {args.max_modified})")
    if args.ppl_cap <= 1:
        raise RagsecError(f"--ppl-cap must be > 1 (got {args.ppl_cap})")
    if not 0 < args.stealth_threshold <= 1:
        raise RagsecError(f"--stealth-threshold must be in (0, 1] (got {args.stealth_threshold})")
    for name in ("joint_trials", "keyword_trials", "e2e_scenarios"):
        if (v := getattr(args, name)) is not None and v < 0:
            raise RagsecError(f"--{name.replace('_', '-')} must be >= 0 (got {v})")
    if args.compare_in_process and not args.index:
        raise RagsecError("--compare-in-process compares a store with ragsec's own index: give --index too")


def load_clean_corpus(paths: list[str] | None) -> Corpus:
    """Merge corpora and drop known poisons (documents with gold spans), keeping demo queries."""
    corpora = [load_corpus(p) for p in (paths or ["secops"])]
    docs = [d for c in corpora for d in c.documents if not d.poison_spans and d.poison_target is None]
    if not docs:
        raise RagsecError("the corpus has no clean documents to attack")
    name = "+".join(c.name for c in corpora)
    queries = [q for c in corpora for q in c.queries if q.variant != "adv"]
    return Corpus(name, docs, queries, source=";".join(c.source for c in corpora))


def reference_figures() -> dict:
    """The paper's released aggregates (exp1 FEVER, exp3 joint), when ../shared/data is present."""
    out: dict = {"source": str(SHARED_REFERENCE), "present": SHARED_REFERENCE.is_dir()}
    for key, fname in (("fever_exp1", "exp1_fever_large_scale_results.json"),
                       ("joint_exp3", "exp3_joint_hybrid_attack_results.json")):
        f = SHARED_REFERENCE / fname
        if f.is_file():
            d = json.loads(f.read_text())
            out[key] = {"config": d.get("config"), "aggregate": d.get("aggregate")}
    out["paper_table6_security_se_n50_k5"] = {
        "alpha=1.0": {"co_retrieval": "19/50", "stealth": "24/50", "overall": "3/50"},
        "alpha=0.7": {"co_retrieval": "0/50", "stealth": "50/50", "overall": "0/50"},
        "alpha=0.5": {"co_retrieval": "0/50", "stealth": "50/50", "overall": "0/50"},
        "alpha=0.3": {"co_retrieval": "0/50", "stealth": "50/50", "overall": "0/50"},
        "chi2_vector_vs_hybrid": 21.05, "cohen_h": 1.33,
    }
    return out


# ---------------------------------------------------------------- the sweep

def _earlier_run(out_path: Path, config: dict[str, Any]) -> dict[str, Any]:
    """An unfinished results file of the same settings at --out (its trials are reused), else {}."""
    if not out_path.is_file():
        return {}
    old = read_json(out_path, "chameleon results")
    old_cfg = old.get("config", {}) if isinstance(old, dict) else {}
    if old_cfg.get("completed_stage") == "done":
        return {}
    if any(old_cfg.get(k) != config.get(k) for k in RESUME_KEY):
        print(f"{out_path} holds another configuration: starting over", file=sys.stderr)
        return {}
    n = len(old.get("trials", []))
    print(f"resuming {out_path}: {n} trial(s), {len(old.get('joint', {}).get('trials', []))} joint trial(s) done",
          file=sys.stderr)
    return old


def cmd_chameleon(args: argparse.Namespace) -> int:
    _check_common(args)
    scenario_file = args.scenarios or default_scenario_file(args.corpus)
    scenarios = load_scenarios(scenario_file)
    corpus = load_clean_corpus(args.corpus)
    out_path = Path(args.out).expanduser()
    if out_path.is_dir():
        raise RagsecError(f"--out '{out_path}' is a folder: give a file name")
    qpd_thr = qpd_threshold(args.qpd_threshold, corpus.name)
    t_start = time.time()
    with connected(args.ray):
        pin_threads(args.threads)
        e = Engines.load(args, corpus, scenarios, e2e=True)
        config = {
            "corpus": corpus.name, "corpus_source": corpus.source, "n_chunks": len(e.retriever.chunks),
            "scenarios": [s.name for s in scenarios], "scenario_file": str(scenario_file or "built-in"), "trials_requested": args.trials, "method": args.method,
            "iterations": args.iterations, "candidates": args.candidates, "max_modified": args.max_modified,
            "ppl_cap": None if args.no_fluency else args.ppl_cap, "fluency_model": None if args.no_fluency or e.llm is None else e.llm.model_id,
            "sleeper_form": args.sleeper_form, "alphas": list(ALPHAS), "ks": list(KS),
            "stealth_threshold": args.stealth_threshold, "qpd_threshold": qpd_thr, "seed": args.seed,
            "embedder": e.retriever.embedder.model_id, "weights": {"lambda": 0.4, "beta": 0.3, "gamma": 0.3, "epsilon": 0.1},
            "index": e.retriever.index_info(), "compare_in_process": bool(args.compare_in_process),
        }
        old = _earlier_run(out_path, config)
        sweep = Sweep(**vars(e), out_path=out_path, results={"config": config, "reference": reference_figures()}, t_start=t_start)
        pairs = _main_trials(sweep, [t for t in old.get("trials", []) if t.get("trial", args.trials) < args.trials])
    run_joint(sweep, old.get("joint", {}).get("trials", []))
    run_keyword_injection(sweep, pairs)
    if not args.no_detectors and pairs:
        run_detector_stage(sweep, pairs, qpd_thr)
    if not args.no_e2e and pairs:
        run_end_to_end(sweep, pairs)
    sweep.save("done")
    print_summary(sweep.results, out_path)
    return 0


def _trial(e: Engines, i: int) -> tuple[Planted, dict[str, Any]]:
    """Trial i: the main attack's pair (gradient or black-box) and its retrieval swept over alpha and k."""
    args = e.args
    sc, seed = e.trial(i)
    pair = build_pair(sc, e.encoder, e.corpus_emb, method=args.method, vocab=e.vocab,
                      sleeper_form=args.sleeper_form, seed=seed, **e.common)
    row = {"trial": i, "scenario": sc.name, "seed": seed, "optimisation": pair.summary(),
           "sleeper": pair.sleeper.text, "trigger": pair.trigger.text,
           **evaluate_both(e.retriever, e.compare, pair.sleeper.text, pair.trigger.text, sc, args.stealth_threshold)}
    return Planted(i, sc, seed, pair.sleeper.text, pair.trigger.text), row


def _main_trials(sw: Sweep, done: list[dict[str, Any]]) -> list[Planted]:
    """Every trial not `done` by an earlier run, here or on the connected Ray cluster (--ray); results
    saved in trial order as they come. The time limit is asked before each trial is started; a trial
    lost on the cluster is listed as failed (and run again by a resumed run)."""
    args, results = sw.args, sw.results
    by_name = {s.name: s for s in sw.scenarios}
    trials = {t["trial"]: t for t in done}
    pairs = {t["trial"]: Planted(t["trial"], by_name[t["scenario"]], t["seed"], t["sleeper"], t["trigger"]) for t in done}
    failed: list[dict[str, Any]] = []
    todo = [i for i in range(args.trials) if i not in trials]
    keep_going = lambda: not sw.out_of_time()
    stream: Iterator[tuple[int, tuple[Planted, dict[str, Any]] | Failed]]
    if args.ray:
        stream = ray_map(Engines.load, (shippable(args), sw.corpus, sw.scenarios, False), _trial, todo,
                         threads=args.threads or 1, keep_going=keep_going)
    else:
        stream = serial_map(sw, _trial, todo, keep_going)
    _summarise(sw, trials, failed)
    for pos, res in tqdm(stream, total=len(todo), desc="chameleon trials", file=sys.stderr):
        i = todo[pos]
        if isinstance(res, Failed):
            sc, seed = sw.trial(i)
            failed.append({"trial": i, "scenario": sc.name, "seed": seed, "error": res.error})
        else:
            pairs[i], trials[i] = res
        _summarise(sw, trials, failed)
        sw.save("trials")
    if (n := len(trials) + len(failed)) < args.trials:
        results["config"]["truncated"] = f"time limit hit after {n} trials"
    return [pairs[i] for i in sorted(pairs)]


def _summarise(sw: Sweep, trials: dict[int, dict[str, Any]], failed: list[dict[str, Any]]) -> None:
    """The main sweep's aggregates over the trials so far (trial order), through each index."""
    rows = [trials[i] for i in sorted(trials)]
    results = sw.results
    results |= {"trials": rows, "failed_trials": failed}
    evs = [t["retrieval"] for t in rows]
    results["by_alpha_k"] = aggregate(evs)
    results["by_alpha_k_scenarios"] = scenario_level(rows)
    results["chi_square_vector_vs_hybrid"] = {
        f"k={k}": {m: vector_vs_hybrid(evs, k, m) for m in ("co_retrieval", "overall")} for k in KS}
    if sw.compare is not None:
        results["by_alpha_k_in_process"] = aggregate([t["retrieval_in_process"] for t in rows])
        results["index_agreement"] = agreement(rows)
    results["config"]["n_trials"] = len(rows)
    results["config"]["effective_n"] = len({t["scenario"] for t in rows})


def scenario_level(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rates over distinct scenarios (the effective n): a scenario counts as a success at a configuration
    when most of its trials succeed there. Trials of one scenario start from the same texts and end a few
    words apart, so these intervals are the honest ones."""
    by_sc: dict[str, list[dict[str, Any]]] = {}
    for t in rows:
        by_sc.setdefault(t["scenario"], []).append(t["retrieval"])
    out: dict[str, dict[str, Any]] = {}
    for key in rows[0]["retrieval"] if rows else []:
        out[key] = {m: rate(sum(2 * sum(bool(ev[key][m]) for ev in evs) > len(evs) for evs in by_sc.values()), len(by_sc))
                    for m in METRICS}
    return out


def agreement(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many (trial, alpha, k, metric) outcomes the store and the in-process index agree on."""
    cells = equal = 0
    differ: list[str] = []
    for t in rows:
        for key, ev in t["retrieval"].items():
            other = t["retrieval_in_process"][key]
            for m in (*METRICS, "sleeper_rank", "trigger_rank"):
                cells += 1
                if ev[m] == other[m]:
                    equal += 1
                elif len(differ) < 20:
                    differ.append(f"trial {t['trial']} {key} {m}: {ev[m]} vs {other[m]}")
    return {"cells": cells, "equal": equal, "differences": differ}
