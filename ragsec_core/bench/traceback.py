"""`ragsec bench traceback`: RAGCharacter's evaluation protocol on real attack data.

For each question, P adversarial texts are planted in the clean corpus (embedded inside the best-ranked
clean host passages at a seeded sentence boundary, or standalone), Pass-0 runs, outcomes are counted
(UNK / EVT / CONFUSION / CORRECT), and Pass-1 runs on every triggered event. Char F1 / IoU / FPR compare
the attribution spans with every gold span inside the prompt-used chunks, in prompt coordinates.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import check_params
from ragsec_core._util.safeio import read_json
from ragsec_core.bench.attacks import AttackRecord, load_attack
from ragsec_core.bench.methods import print_methods_table, score, summarise_methods
from ragsec_core.bench.planting import PlantedCorpus
from ragsec_core.data.trace import Labels
from ragsec_core.models.llm import load_llm
from ragsec_core.rag import Pipeline
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.traceback.baselines import MethodContext, calibrate, get, parse_methods


def cmd_bench_traceback(args: argparse.Namespace) -> int:
    if args.merge:
        results = merge_results(args.merge)
        save(results, args.out)
        print_table(results)
        return 0

    check_params(args.k, args.alpha)
    if args.poisons_per_query < 1 or args.limit < 1 or not 0 <= args.first_question < args.limit:
        raise RagsecError("--poisons-per-query and --limit must be >= 1, and 0 <= --first-question < --limit")
    if not 0.0 < args.ppl_quantile < 1.0 or args.ppl_sample < 1:
        raise RagsecError("--ppl-quantile must be in (0, 1) and --ppl-sample >= 1")

    args.methods = ",".join(parse_methods(args.methods))
    records = load_attack(Path(args.data))[: args.limit]
    results = run_benchmark(records, args)
    print_table(results)
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def save(results: dict[str, Any], out: str | None) -> None:
    """Atomic write, also after every event, so an interrupted run keeps its partial results."""
    if out:
        write_text_atomic(out, json.dumps(results, indent=2))


def method_context(args: argparse.Namespace, llm: Any, planted: Any) -> Any:
    """The shared context of all methods: victim, judge/proxy, and the PPL cutoff (calibrated once on a
    seeded sample of clean corpus chunks, only when a method needs it)."""
    judge = load_llm(args.judge_model) if args.judge_model else llm
    ctx = MethodContext(llm, judge, seed=args.seed)
    if "ppl" in args.methods.split(","):
        ctx.ppl_threshold = calibrate(ctx, [c.text for c in planted.base.chunks], args.ppl_quantile, args.ppl_sample)
    return ctx


def legacy_fields(row: dict[str, Any]) -> dict[str, Any]:
    """RAGCharacter's per-event keys as earlier result files had them."""
    d = row["details"]
    return {
        "resolved": d["resolved"], "char_f1": row["char_f1"], "char_iou": row["char_iou"], "char_fpr": row["char_fpr"],
        "chunk_hit": row["chunk_hit"], "calls": row["calls"], "fpe": d["fpe"], "seconds": row["seconds"],
        "rounds": d["rounds"], "paths": d["paths"], "gold_chars": row["gold_chars"], "pred_chars": row["pred_chars"],
    }


def run_benchmark(records: list[AttackRecord], args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm


    methods = args.methods.split(",")
    llm, embedder = load_llm(), Embedder()
    planted = PlantedCorpus.build(records, args.corpus, embedder)
    ctx = method_context(args, llm, planted)
    rng = random.Random(args.seed)
    outcomes = {"EVT": 0, "CORRECT": 0, "CONFUSION": 0, "UNK": 0}
    events: list[dict[str, Any]] = []
    bar = tqdm(records, desc="traceback bench", unit="question", file=sys.stderr)
    for q, rec in enumerate(bar):
        advs = [f"{rec.question.rstrip('?. ')}. {a}" if args.attack_form == "black" else a for a in rec.adv_texts]
        advs = advs[: args.poisons_per_query]
        corpus, retriever = planted.with_poisons(rec, advs, args.mode, args.alpha, rng)  # keeps the seeded draws
        if q < args.first_question:
            continue
        trace = Pipeline(corpus, retriever, llm).ask(
            rec.question, k=args.k, alpha=args.alpha, use=args.use, labels=Labels(rec.id, list(rec.answers), rec.incorrect)
        )
        s = trace.signals
        outcome = "UNK" if s.abstained else "EVT" if s.t_asr else "CORRECT" if s.correct else "CONFUSION"
        outcomes[outcome] += 1
        if not s.par:
            continue
        ev = ctx.for_event(retriever)
        rows: dict[str, Any] = {}
        for m in methods:
            bar.set_postfix(events=len(events) + 1, method=m)
            rows[m] = score(trace, get(m).run(trace, ev))
        event = {"id": rec.id, "trace_id": trace.trace_id, "answer": trace.answer}
        if "ragcharacter" in rows:
            event |= legacy_fields(rows["ragcharacter"])
        events.append(event | {"methods": rows})
        save(summarise(events, outcomes, args, ctx.ppl_threshold) | {"complete": False}, args.out)
    results = summarise(events, outcomes, args, ctx.ppl_threshold) | {"complete": True}
    save(results, args.out)
    return results


def merge_results(paths: list[str]) -> dict[str, Any]:
    """One result from the parts of a run split with --first-question. A stopped part counts the
    questions it finished (`parts` lists each part's first question and question count); the merged
    result is complete only when every part is."""
    parts = [read_json(Path(p), "traceback results") for p in paths]
    varying = ("command", "bench", "first_question", "limit", "out", "merge")  # what differs between the parts
    configs = [{k: v for k, v in r.get("config", {}).items() if k not in varying} for r in parts]
    if any(c != configs[0] for c in configs):
        raise RagsecError("--merge needs result files of one configuration (data, P, k, alpha, … differ)")
    events = [e for r in parts for e in r["per_event"]]
    outcomes = {k: sum(r["outcomes"][k] for r in parts) for k in parts[0]["outcomes"]}
    limit = max(r["config"].get("limit", 0) for r in parts)
    args = argparse.Namespace(**parts[0]["config"] | {"first_question": 0, "limit": limit, "merge": paths})
    covered = [{"file": p, "first_question": r["config"].get("first_question", 0), "questions": sum(r["outcomes"].values()),
                "complete": bool(r.get("complete"))} for p, r in zip(paths, parts)]
    done = all(x["complete"] for x in covered)
    return summarise(events, outcomes, args, parts[0].get("ppl_threshold")) | {"complete": done, "parts": covered}


def summarise(
    events: list[dict[str, Any]], outcomes: dict[str, int], args: argparse.Namespace, ppl_threshold: float | None = None
) -> dict[str, Any]:
    """Top-level metric keys are RAGCharacter's (as before) when it ran, else the first method's;
    `methods` holds the same keys for every method."""
    methods = args.methods.split(",")
    per_method = summarise_methods(events, methods)
    primary = "ragcharacter" if "ragcharacter" in methods else methods[0]
    legacy = [e for e in events if "resolved" in e]

    def mean(key: str) -> float | None:
        return round(statistics.fmean(e[key] for e in legacy), 4) if legacy else None

    return {
        "events": len(events),
        "outcomes": outcomes,
        **{k: per_method[primary][k] for k in ("char_f1", "char_iou", "char_fpr", "chunk_acc")},
        "resolved_rate": mean("resolved"),
        "calls_per_event": per_method[primary]["calls_per_event"],
        "fpe_per_event": mean("fpe"),
        "seconds_per_event": per_method[primary]["seconds_per_event"],
        "primary_method": primary,
        "methods": per_method,
        "ppl_threshold": ppl_threshold,
        "config": {k: v for k, v in vars(args).items() if k != "func"},
        "per_event": events,
    }


def print_table(r: dict[str, Any]) -> None:
    cfg = r["config"]
    print(f"data={cfg['data']} mode={cfg['mode']} form={cfg['attack_form']} P={cfg['poisons_per_query']} "
          f"k={cfg['k']} alpha={cfg['alpha']} mask={cfg['mask_mode']} questions={sum(r['outcomes'].values())}")
    print("outcomes: " + "  ".join(f"{k}={v}" for k, v in r["outcomes"].items()))
    cols = ["events", "char_f1", "char_iou", "char_fpr", "chunk_acc", "resolved_rate", "calls_per_event", "fpe_per_event", "seconds_per_event"]
    print(" | ".join(f"{c:>14}" for c in cols))
    print(" | ".join(f"{'-' if r[c] is None else r[c]:>14}" for c in cols))
    if list(r["methods"]) != ["ragcharacter"]:
        print()
        print_methods_table(r["methods"])
