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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import RagsecError


@dataclass(frozen=True)
class AttackRecord:
    id: str
    question: str
    adv_texts: tuple[str, ...]
    incorrect: str
    answers: tuple[str, ...]
    context: tuple[tuple[str, str], ...]  # (title, text) clean passages shipped with the record


def load_attack(path: Path) -> list[AttackRecord]:
    """PoisonedRAG object format, Stealthy list format, or a list with `incorrect_answer` / `answer`."""
    from .corpus import read_json

    data = read_json(path, "attack data")
    rows = list(data.values()) if isinstance(data, dict) else data
    out = []
    for i, r in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(r, dict) or "question" not in r or "adv_texts" not in r:
            raise RagsecError(f"'{path}': record {i} lacks 'question' / 'adv_texts'")
        advs = tuple(a["context"] if isinstance(a, dict) else str(a) for a in r["adv_texts"])
        correct = r.get("correct answer", r.get("answer", []))
        answers = tuple(str(a) for a in (correct if isinstance(correct, list) else [correct]))
        incorrect = str(r.get("incorrect answer", r.get("incorrect_answer", "")))
        ctx = tuple((str(c.get("title", "")), str(c.get("text", ""))) for c in r.get("context", []) or [])
        out.append(AttackRecord(str(r.get("id", i)), r["question"], advs, incorrect, answers, ctx))
    if not out:
        raise RagsecError(f"'{path}' holds no attack records")
    return out


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("traceback", help="RAGCharacter Pass-1 benchmark (Char F1 / IoU / FPR)")
    p.add_argument("--data", required=True, help="attack file (PoisonedRAG / Stealthy / list format)")
    p.add_argument("--corpus", default=None, help="clean corpus (default: the data file's context passages)")
    p.add_argument("--mode", choices=["embedded", "standalone"], default="embedded")
    p.add_argument("--attack-form", choices=["black", "text"], default="black")
    p.add_argument("--poisons-per-query", type=int, default=1)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--use", type=int, default=None)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--mask-mode", choices=["delete", "placeholder"], default="delete")
    p.add_argument("--objective", choices=["event", "oracle"], default="event")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write results JSON here (atomically)")
    p.set_defaults(func=cmd_bench_traceback)


def cmd_bench_traceback(args: argparse.Namespace) -> int:
    from .inputs import check_params

    check_params(args.k, args.alpha)
    if args.poisons_per_query < 1 or args.limit < 1:
        raise RagsecError("--poisons-per-query and --limit must be >= 1")
    records = load_attack(Path(args.data))[: args.limit]
    results = run_benchmark(records, args)
    print_table(results)
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def save(results: dict[str, Any], out: str | None) -> None:
    """Atomic write, also after every event, so an interrupted run keeps its partial results."""
    if out:
        from .atomic import write_text_atomic

        write_text_atomic(out, json.dumps(results, indent=2))


def run_benchmark(records: list[AttackRecord], args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm

    from .bench_corpus import PlantedCorpus
    from .embed import Embedder
    from .llm import load_llm
    from .metrics import char_scores
    from .rag import Pipeline
    from .trace import Labels
    from .traceback import run_pass1

    llm, embedder = load_llm(), Embedder()
    planted = PlantedCorpus.build(records, args.corpus, embedder)
    rng = random.Random(args.seed)
    outcomes = {"EVT": 0, "CORRECT": 0, "CONFUSION": 0, "UNK": 0}
    events: list[dict[str, Any]] = []
    for rec in tqdm(records, desc="traceback bench", unit="question", file=sys.stderr):
        advs = [f"{rec.question.rstrip('?. ')}. {a}" if args.attack_form == "black" else a for a in rec.adv_texts]
        advs = advs[: args.poisons_per_query]
        corpus, retriever = planted.with_poisons(rec, advs, args.mode, args.alpha, rng)
        trace = Pipeline(corpus, retriever, llm).ask(
            rec.question, k=args.k, alpha=args.alpha, use=args.use, labels=Labels(rec.id, list(rec.answers), rec.incorrect)
        )
        s = trace.signals
        outcome = "UNK" if s.abstained else "EVT" if s.t_asr else "CORRECT" if s.correct else "CONFUSION"
        outcomes[outcome] += 1
        if not s.par:
            continue
        t0 = time.perf_counter()
        res = run_pass1(llm, trace, objective=args.objective, mask_mode=args.mask_mode)
        secs = time.perf_counter() - t0
        blocks = {sp.hit: sp for sp in trace.spans}
        gold = [(blocks[i].start + a, blocks[i].start + b) for i in trace.used for a, b in trace.hits[i].poison_spans]
        pred = [tuple(r.prompt) for r in res.attribution]
        sc = char_scores(pred, gold)  # type: ignore[arg-type]
        top = res.attribution[0].hit if res.attribution else None
        events.append({
            "id": rec.id, "trace_id": trace.trace_id, "answer": trace.answer, "resolved": res.resolved,
            "char_f1": sc.f1, "char_iou": sc.iou, "char_fpr": sc.fpr,
            "chunk_hit": bool(top is not None and trace.hits[top].poison_spans),
            "calls": res.model_calls, "fpe": res.forward_pass_equivalents, "seconds": secs,
            "rounds": len(res.rounds), "paths": [r.path for r in res.rounds],
            "gold_chars": sum(b - a for a, b in gold), "pred_chars": sum(b - a for a, b in pred),
        })
        save(summarise(events, outcomes, args) | {"complete": False}, args.out)
    results = summarise(events, outcomes, args) | {"complete": True}
    save(results, args.out)
    return results


def summarise(events: list[dict[str, Any]], outcomes: dict[str, int], args: argparse.Namespace) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        return round(statistics.fmean(e[key] for e in events), 4) if events else None

    return {
        "events": len(events),
        "outcomes": outcomes,
        "char_f1": mean("char_f1"),
        "char_iou": mean("char_iou"),
        "char_fpr": mean("char_fpr"),
        "chunk_acc": mean("chunk_hit"),
        "resolved_rate": mean("resolved"),
        "calls_per_event": mean("calls"),
        "fpe_per_event": mean("fpe"),
        "seconds_per_event": mean("seconds"),
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
