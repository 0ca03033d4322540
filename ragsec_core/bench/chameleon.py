"""`ragsec bench chameleon`: the Semantic Chameleon sweep.

The sweep: n seeded trials (trial i attacks scenario i mod S with seed base + i div S), each builds a
sleeper/trigger pair against MiniLM, injects it into the corpus and measures co-retrieval, any-retrieval,
stealth and overall success for alpha in {1.0, 0.7, 0.5, 0.3} and k in {5, 10}; then the joint sparse +
dense attack, the keyword-injection sweep, the detectors on the corpus with every trial's pair planted,
and the end-to-end run with the local LLM. Everything goes to one JSON (written atomically after every
stage, so an interrupted run keeps what it finished). `cli/bench.py` imports this module only to run it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.paths import shared_data_dir
from ragsec_core._util.text import tokenize
from ragsec_core.bench.fanout import Failed, check_index, connected, pin_threads, ray_map, serial_map, shippable
from ragsec_core.chameleon.attack import (
    KEYWORD_DENSITIES,
    KEYWORD_STRATEGIES,
    Encoder,
    corpus_vocabulary,
    inject_keywords,
    query_keywords,
)
from ragsec_core.chameleon.evaluate import (
    ALPHAS,
    KS,
    aggregate,
    build_pair,
    end_to_end,
    evaluate_retrieval,
    inject,
    rate,
    vector_vs_hybrid,
)
from ragsec_core.chameleon.scenarios import default_scenario_file, load_scenarios
from ragsec_core.data.corpus import Chunk, Corpus, load_corpus
from ragsec_core.models.llm import load_llm
from ragsec_core.monitor.detectors import default_query_sets, evaluate, qpd_threshold, run_monitor
from ragsec_core.rag import Pipeline, build_retriever
from ragsec_core.retrieval.embed import Embedder

if TYPE_CHECKING:
    from ragsec_core.chameleon.evaluate import Pair
    from ragsec_core.chameleon.scenarios import Scenario
    from ragsec_core.models.llm import LLM
    from ragsec_core.retrieval.hybrid import HybridRetriever

SHARED_REFERENCE = shared_data_dir() / "semantic_chameleon"
JOINT_ALPHAS = (0.7, 0.5, 0.3)


# ---------------------------------------------------------------- helpers

def _check_common(args: argparse.Namespace) -> None:
    check_index(args)
    for name in ("trials", "iterations", "candidates", "e2e_tokens"):
        if getattr(args, name) < 1:
            raise RagsecError(f"--{name} must be >= 1 (got {getattr(args, name)})")
    if not 0 < args.max_modified <= 1:
        raise RagsecError(f"--max-modified must be in (0, 1] (got {args.max_modified})")
    if args.ppl_cap <= 1:
        raise RagsecError(f"--ppl-cap must be > 1 (got {args.ppl_cap})")
    if not 0 < args.stealth_threshold <= 1:
        raise RagsecError(f"--stealth-threshold must be in (0, 1] (got {args.stealth_threshold})")
    for name in ("joint_trials", "keyword_trials"):
        if (v := getattr(args, name)) is not None and v < 0:
            raise RagsecError(f"--{name.replace('_', '-')} must be >= 0 (got {v})")


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


def _tfidf_top(retriever: HybridRetriever, query: str, n: int = 8) -> list[str]:
    """Top tf-idf terms of the target query's BM25 top-5 chunks."""
    import math
    from collections import Counter

    texts = [c.text for c in retriever.chunks]
    df: Counter[str] = Counter(t for x in texts for t in set(tokenize(x)))
    hits = retriever.search(query, k=5, alpha=0.0)
    tf: Counter[str] = Counter(t for h in hits for t in tokenize(h.chunk.text) if t.isalpha())
    score = {t: c * math.log(len(texts) / df[t]) for t, c in tf.items() if df[t]}
    return [t for t, _ in sorted(score.items(), key=lambda x: -x[1])[:n]]


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


# ---------------------------------------------------------------- the sweep

@dataclass
class _Engines:
    """What a trial needs: inputs, MiniLM (index and encoder), the fluency LM. Built once per process: the
    driver's sweep is one, and with --ray each actor builds its own from the driver's corpus and scenarios."""

    args: argparse.Namespace
    scenarios: list[Scenario]
    corpus: Corpus
    retriever: HybridRetriever
    encoder: Encoder
    vocab: list[str]
    llm: LLM | None

    @classmethod
    def load(cls, args: argparse.Namespace, corpus: Corpus, scenarios: list[Scenario], e2e: bool) -> _Engines:
        """The LM is loaded for the fluency filter, and for the end-to-end stage when `e2e`."""
        retriever = build_retriever(corpus, embedder := Embedder(), index=args.index, build_index=args.index_build)
        llm = load_llm() if not args.no_fluency or (e2e and not args.no_e2e) else None
        return cls(args, scenarios, corpus, retriever, Encoder(embedder), corpus_vocabulary([c.text for c in retriever.chunks]), llm)

    @property
    def common(self) -> dict[str, Any]:
        """The optimiser settings every pair is built with."""
        a = self.args
        return dict(iterations=a.iterations, n_candidates=a.candidates, max_modified=a.max_modified,
                    llm=None if a.no_fluency else self.llm, ppl_cap=a.ppl_cap)

    def trial(self, i: int) -> tuple[Scenario, int]:
        """Trial i attacks scenario i mod S with seed base + i div S."""
        return self.scenarios[i % len(self.scenarios)], self.args.seed + i // len(self.scenarios)


@dataclass
class _Sweep(_Engines):
    """The driver's engines plus the results so far and the clock. Each stage adds its key to `results`
    and saves, so an interrupted run keeps every finished stage."""

    out_path: Path = Path()
    results: dict[str, Any] = field(default_factory=dict)
    t_start: float = field(default_factory=time.time)

    def out_of_time(self) -> bool:
        """`--max-minutes` (unset or 0: no limit) has passed since the start: start no new trial."""
        return bool(self.args.max_minutes) and time.time() > self.t_start + 60 * self.args.max_minutes

    def save(self, stage: str) -> None:
        self.results["config"]["completed_stage"] = stage
        self.results["config"]["elapsed_s"] = round(time.time() - self.t_start, 1)
        write_text_atomic(self.out_path, json.dumps(self.results, indent=1, default=float) + "\n")


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
        e = _Engines.load(args, corpus, scenarios, e2e=True)
        config = {
            "corpus": corpus.name, "corpus_source": corpus.source, "n_chunks": len(e.retriever.chunks),
            "scenarios": [s.name for s in scenarios], "scenario_file": str(scenario_file or "built-in"), "trials_requested": args.trials, "method": args.method,
            "iterations": args.iterations, "candidates": args.candidates, "max_modified": args.max_modified,
            "ppl_cap": None if args.no_fluency else args.ppl_cap, "fluency_model": None if args.no_fluency or e.llm is None else e.llm.model_id,
            "sleeper_form": args.sleeper_form, "alphas": list(ALPHAS), "ks": list(KS),
            "stealth_threshold": args.stealth_threshold, "qpd_threshold": qpd_thr, "seed": args.seed,
            "embedder": e.retriever.embedder.model_id, "weights": {"lambda": 0.4, "beta": 0.3, "gamma": 0.3, "epsilon": 0.1},
        }
        sweep = _Sweep(**vars(e), out_path=out_path, results={"config": config, "reference": reference_figures()}, t_start=t_start)
        pairs = _main_trials(sweep)
    _joint(sweep)
    _keyword_injection(sweep, pairs)
    if not args.no_detectors and pairs:
        _detectors(sweep, pairs, qpd_thr)
    if not args.no_e2e and pairs:
        _end_to_end(sweep, pairs)
    sweep.save("done")
    _print_summary(sweep.results, out_path)
    return 0


def _trial(e: _Engines, i: int) -> tuple[Pair, dict[str, Any]]:
    """Trial i: the main attack's pair (gradient or black-box) and its retrieval swept over alpha and k."""
    args = e.args
    sc, seed = e.trial(i)
    pair = build_pair(sc, e.encoder, e.retriever.embeddings, method=args.method, vocab=e.vocab,
                      sleeper_form=args.sleeper_form, seed=seed, **e.common)
    ev = evaluate_retrieval(inject(e.retriever, pair.sleeper.text, pair.trigger.text), sc,
                            stealth_threshold=args.stealth_threshold)
    return pair, {"scenario": sc.name, "seed": seed, "optimisation": pair.summary(),
                  "sleeper": pair.sleeper.text, "trigger": pair.trigger.text, "retrieval": ev}


def _main_trials(sw: _Sweep) -> list[tuple[Scenario, int, Pair]]:
    """Every trial, here or on the connected Ray cluster (--ray); results saved in trial order as they come.
    The time limit is asked before each trial is started; a trial lost on the cluster is listed as failed."""
    args, results = sw.args, sw.results
    trials: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    pairs: list[tuple[Scenario, int, Pair]] = []
    keep_going = lambda: not sw.out_of_time()
    stream: Iterator[tuple[int, tuple[Pair, dict[str, Any]] | Failed]]
    if args.ray:
        stream = ray_map(_Engines.load, (shippable(args), sw.corpus, sw.scenarios, False), _trial, range(args.trials),
                         threads=args.threads or 1, keep_going=keep_going)
    else:
        stream = serial_map(sw, _trial, range(args.trials), keep_going)
    for i, res in tqdm(stream, total=args.trials, desc="chameleon trials", file=sys.stderr):
        sc, seed = sw.trial(i)
        if isinstance(res, Failed):
            failed.append({"trial": i, "scenario": sc.name, "seed": seed, "error": res.error})
        else:
            pairs.append((sc, seed, res[0]))
            trials.append(res[1])
        results |= {"trials": trials, "failed_trials": failed}
        results["by_alpha_k"] = aggregate([t["retrieval"] for t in trials])
        results["chi_square_vector_vs_hybrid"] = {
            f"k={k}": {m: vector_vs_hybrid([t["retrieval"] for t in trials], k, m) for m in ("co_retrieval", "overall")}
            for k in KS}
        results["config"]["n_trials"] = len(trials)
        sw.save("trials")
    if (n := len(trials) + len(failed)) < args.trials:
        results["config"]["truncated"] = f"time limit hit after {n} trials"
    return pairs


def _joint(sw: _Sweep) -> None:
    """The joint sparse + dense attack against each hybrid alpha (k = 5)."""
    args = sw.args
    n_joint = args.trials if args.joint_trials is None else args.joint_trials
    joint: dict[str, Any] = {"alphas": list(JOINT_ALPHAS), "k": 5, "trials": []}
    for i in tqdm(range(n_joint), desc="joint trials", file=sys.stderr):
        if sw.out_of_time():
            joint["truncated"] = f"time limit hit after {i} trials"
            break
        sc, seed = sw.trial(i)
        row: dict[str, Any] = {"scenario": sc.name, "seed": seed, "configs": {}}
        for a in JOINT_ALPHAS:
            pair = build_pair(sc, sw.encoder, sw.retriever.embeddings, method="joint", vocab=sw.vocab, alpha=a, seed=seed,
                              **sw.common)
            ev = evaluate_retrieval(inject(sw.retriever, pair.sleeper.text, pair.trigger.text), sc, alphas=(a,), ks=(5,),
                                    stealth_threshold=args.stealth_threshold)[f"alpha={a},k=5"]
            row["configs"][f"alpha={a}"] = {**ev, "optimisation": pair.summary()}
        joint["trials"].append(row)
        joint["aggregate"] = {f"alpha={a}": _joint_aggregate(joint["trials"], a) for a in JOINT_ALPHAS}
        sw.results["joint"] = joint
        sw.save("joint")
    sw.results.setdefault("joint", joint)


def _joint_aggregate(trials: list[dict[str, Any]], a: float) -> dict[str, Any]:
    """Rates at one alpha plus the mean final dense and sparse scores of both documents."""
    opt = [t["configs"][f"alpha={a}"]["optimisation"][d] for t in trials for d in ("sleeper", "trigger")]
    return {**aggregate([{"x": t["configs"][f"alpha={a}"]} for t in trials])["x"],
            "mean_final_dense": float(np.mean([o["dense_final"] for o in opt])),
            "mean_final_sparse": float(np.mean([o["sparse_final"] for o in opt]))}


def _keyword_injection(sw: _Sweep, pairs: list[tuple[Scenario, int, Pair]]) -> None:
    """Keywords injected into the optimised pairs, by strategy and density (hybrid alphas, k = 5)."""
    args = sw.args
    n_kw = len(pairs) if args.keyword_trials is None else min(args.keyword_trials, len(pairs))
    kw_rows: dict[str, list[Any]] = {}
    rng = np.random.default_rng(args.seed)
    for sc, seed, pair in tqdm(pairs[:n_kw], desc="keyword injection", file=sys.stderr):
        if sw.out_of_time():
            sw.results.setdefault("keyword_injection_truncated", "time limit hit")
            break
        sources = {
            "query_keywords": list(query_keywords(sc.target_query)),
            "tfidf_top": _tfidf_top(sw.retriever, sc.target_query),
            "attack_keywords": list(sc.attack_keywords),
            "random_corpus": [sw.vocab[j] for j in rng.choice(len(sw.vocab), 10, replace=False)],
        }
        for strat in KEYWORD_STRATEGIES:
            for dens in KEYWORD_DENSITIES:
                s_txt = inject_keywords(pair.sleeper.text, sources[strat], dens, seed=seed)
                t_txt = inject_keywords(pair.trigger.text, sources[strat], dens, seed=seed + 1, protected=sc.payload)
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


def _detectors(sw: _Sweep, pairs: list[tuple[Scenario, int, Pair]], qpd_thr: float) -> None:
    """The corpus monitor on the corpus with the first pair of each scenario planted."""
    first: dict[str, tuple[str, str]] = {}
    for sc, _seed, pair in pairs:
        first.setdefault(sc.name, (pair.sleeper.text, pair.trigger.text))
    sens, ben = default_query_sets(sw.scenarios, sw.corpus)
    sw.results["detectors"] = run_detectors(sw.retriever, list(first.values()), sens, ben, qpd_thr, sw.args.queries_per_day)
    sw.save("detectors")


def _end_to_end(sw: _Sweep, pairs: list[tuple[Scenario, int, Pair]]) -> None:
    """The first pair of each scenario through the local LLM: is the canary delivered?"""
    args, llm = sw.args, sw.llm
    assert llm is not None  # loaded in cmd_chameleon unless both --no-fluency and --no-e2e
    pipe = Pipeline(sw.corpus, sw.retriever, llm)
    seen: set[str] = set()
    rows = []
    limit = len(sw.scenarios) if args.e2e_scenarios is None else args.e2e_scenarios
    for sc, seed, pair in tqdm(pairs, desc="end-to-end", file=sys.stderr):
        if sc.name in seen or len(seen) >= limit:
            continue
        seen.add(sc.name)
        rows.append({"scenario": sc.name, "seed": seed,
                     **end_to_end(pipe, sw.retriever, sc, pair.sleeper.text, pair.trigger.text,
                                 max_new_tokens=args.e2e_tokens)})
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


def _print_summary(results: dict, out_path: Path) -> None:
    print(f"corpus {results['config']['corpus']} ({results['config']['n_chunks']} chunks), "
          f"{results['config'].get('n_trials', 0)} trials, method {results['config']['method']}")
    print(f"{'config':<16}{'co-ret':>16}{'any':>16}{'stealth':>16}{'overall':>16}")
    for key, row in results.get("by_alpha_k", {}).items():
        cells = [f"{row[m]['count']}/{row[m]['n']} ({100 * row[m]['rate']:.0f}%)" for m in ("co_retrieval", "any_retrieval", "stealth", "overall")]
        print(f"{key:<16}" + "".join(f"{c:>16}" for c in cells))
    for key, row in results.get("joint", {}).get("aggregate", {}).items():
        print(f"joint {key}: co-ret {row['co_retrieval']['count']}/{row['co_retrieval']['n']}, "
              f"stealth {row['stealth']['count']}/{row['stealth']['n']}, overall {row['overall']['count']}/{row['overall']['n']}")
    e2e = results.get("end_to_end")
    if e2e and e2e.get("n"):
        print(f"end-to-end ({e2e['model']}): attack success {e2e['attack_success']['count']}/{e2e['n']}, "
              f"sleeper-only {e2e['sleeper_only_success']['count']}/{e2e['n']}, leakage {e2e['mean_leakage']:.2f}, "
              f"divergence {e2e['mean_divergence']:.2f}")
    print(f"results: {out_path}")
