"""`ragsec bench speed`: the performance targets of issue #8, measured side by side in one run.

Why side by side: the 2 CPU cores are shared, so absolute seconds swing with other people's load. Every
comparison (optimised vs naive Pass-1, ragsec BM25 vs rank-bm25 vs bm25s, flat vs HNSW, hooks vs
`output_attentions`) runs on the same inputs, interleaved, in one process, and is reported as a ratio.

Sections: `traceback` (Pass-1 optimised vs naive on real Stealthy-NQ events built like `ragsec bench
traceback` builds them), `retrieval`, `attention`, `startup` (see `speed_parts`). `--only` picks sections,
`--merge` combines the JSON of separate runs into one table. `--chroma` adds the hybrid latency with a
Chroma collection as the dense side beside the in-process index, at 100k and 1M passages (`speed_chroma`).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.extras import require
from ragsec_core._util.paths import cache_dir
from ragsec_core._util.text import black_box_text
from ragsec_core.bench import speed_chroma, speed_parts
from ragsec_core.bench.attacks import load_attack
from ragsec_core.bench.methods import gold_spans
from ragsec_core.bench.options import SPEED_SECTIONS
from ragsec_core.bench.planting import PlantedCorpus
from ragsec_core.data.trace import Labels, Trace
from ragsec_core.models.llm import load_llm
from ragsec_core.rag import Pipeline
from ragsec_core.retrieval.embed import Embedder
from ragsec_core.traceback.metrics import char_scores
from ragsec_core.traceback.ragcharacter import run_pass1

TARGETS = {  # key: (comparison, bound) from the "Done when"
    "traceback_speedup": (">=", 5.0),
    "fpe_per_event": ("<=", 3.0),
    "second_start_s": ("<=", 5.0),
    "hybrid_p50_ms_100k": ("<=", 20.0),
    "attention_overhead": ("<=", 1.3),
}


def cmd_bench_speed(args: argparse.Namespace) -> int:
    require("bench", "ragsec bench speed", "rank_bm25", "psutil")  # its reference columns and memory probe
    if args.merge:
        results = merge([json.loads(Path(f).read_text()) for f in args.merge])
    else:
        results = run(args)
    print_table(results)
    if args.out:
        write_text_atomic(args.out, json.dumps(results, indent=2))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from runs of separate sections; traceback events of several runs are pooled."""
    results: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for part in parts:
        rows += part.get("traceback_per_event", [])
        results.update({k: v for k, v in part.items() if not k.startswith(("traceback", "identical", "naive_")) or k == "traceback_skipped"})
    if rows:
        name = next((p["traceback_data"] for p in parts if "traceback_data" in p), "events")
        results |= summarise_traceback(rows, Path(name))
    results["merged_from"] = len(parts)
    return results


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch


    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if bad := [s for s in only if s not in SPEED_SECTIONS]:
        raise RagsecError(f"unknown section(s) {bad}; choose from {SPEED_SECTIONS}")
    quick = args.quick
    results: dict[str, Any] = {"config": {k: v for k, v in vars(args).items() if k != "func"} | {"torch_threads": torch.get_num_threads()}}
    if "startup" in only:  # first: a fresh subprocess while nothing of ours is loaded
        results |= speed_parts.startup()
    if "retrieval" in only or "hybrid" in only:
        sizes = [int(s) for s in (args.sizes or "20000,100000").split(",")]
        results |= speed_parts.retrieval(sizes, args.queries or (20 if quick else 100), quick, "retrieval" not in only)
    if "attention" in only:
        lengths = [int(s) for s in (args.attn_tokens or ("600" if quick else "600,2000")).split(",")]
        results |= speed_parts.attention(lengths, repeats=1 if quick else 2)
    if args.chroma:
        require("scale", "ragsec bench speed --chroma", "chromadb")
        location = None if args.chroma == "embedded" else args.chroma
        results |= speed_chroma.chroma_latency([int(s) for s in args.chroma_sizes.split(",")], args.queries or 100, location)
    if "traceback" in only:
        partial = lambda part: _save(results | part | {"complete": False}, args.out)
        results |= traceback_speed(
            Path(args.data), args.events or (3 if quick else 20), args.questions, args.seed, partial, args.first_question,
            args.last_question,
        )
    return results | {"complete": True}


def _save(results: dict[str, Any], out: str | None) -> None:
    """Atomic write, also after every traced event, so an interrupted run keeps its partial results."""
    if out:
        write_text_atomic(out, json.dumps(results, indent=2))


# ---------------------------------------------------------------- traceback: optimised vs naive

def traceback_speed(
    data: Path,
    n_events: int,
    max_questions: int,
    seed: int,
    partial: Callable[[dict[str, Any]], None] | None = None,
    first: int = 0,
    last: int | None = None,
) -> dict[str, Any]:
    """Pass-1 on the first `n_events` PAR events of `data` (embedded, black form, P=1, dense top-5, seed
    as in `ragsec bench traceback`), each run by the optimised engine and by the naive path, order
    alternating per event."""
    if not data.exists():
        return {"traceback_skipped": f"attack data not found: {data}"}

    llm, embedder = load_llm(), Embedder()
    records = load_attack(data)[:max_questions]
    planted = PlantedCorpus.build(records, None, embedder)
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    store = Pass0Cache(data, seed, max_questions, first)
    for q, rec in enumerate(records):
        advs = [black_box_text(rec.question, a) for a in rec.adv_texts][:1]  # black form, P = 1
        corpus, retriever = planted.with_poisons(rec, advs, "embedded", 1.0, rng)  # always: keeps the seeded draws
        if q < first:
            continue
        if last is not None and q >= last:
            break
        trace = store.get(q)
        if trace is None:
            labels = Labels(rec.id, list(rec.answers), rec.incorrect)
            trace = store.put(q, Pipeline(corpus, retriever, llm).ask(rec.question, k=5, alpha=1.0, labels=labels))
        if not trace.signals.par:
            continue
        runs = {}
        for naive in ((False, True) if len(rows) % 2 == 0 else (True, False)):
            t0 = time.perf_counter()
            res = run_pass1(llm, trace, naive=naive)
            runs[naive] = (res, time.perf_counter() - t0)
        (fast, fast_s), (slow, slow_s) = runs[False], runs[True]
        gold = gold_spans(trace)
        rows.append({
            "id": rec.id, "question_index": q, "paths": [r.path for r in fast.rounds],
            "identical_spans": _spans(fast) == _spans(slow),
            "identical_success": _flags(fast) == _flags(slow),
            "identical_answers": [t.answer for t in fast.tests] == [t.answer for t in slow.tests],
            "optimised_s": round(fast_s, 2), "naive_s": round(slow_s, 2),
            "optimised_fpe": fast.forward_pass_equivalents, "naive_fpe": slow.forward_pass_equivalents,
            "optimised_calls": fast.model_calls, "naive_calls": slow.model_calls, "tests": len(fast.tests),
            "char_f1": char_scores([r.prompt_span for r in fast.attribution], gold).f1,
            "resolved": fast.resolved, "prompt_tokens": trace.timing["prompt_tokens"],
        })
        print(f"event {len(rows)}/{n_events} q{q}: {rows[-1]['paths']} optimised {fast_s:.1f}s "
              f"naive {slow_s:.1f}s identical={rows[-1]['identical_spans'] and rows[-1]['identical_success']}", file=sys.stderr)
        if partial:
            partial(summarise_traceback(rows, data))
        if len(rows) >= n_events:
            break
    return summarise_traceback(rows, data)


class Pass0Cache:
    """Pass-0 traces of the bench questions, kept under the cache folder: Pass-0 is not what this bench
    measures, and on the shared cores it costs as much as the comparison itself, so a rerun reuses it."""

    def __init__(self, data: Path, seed: int, questions: int, first: int = 0) -> None:
        # the clean corpus is the context passages of the first `questions` records, hence in the key
        self.path = cache_dir() / "speed" / f"pass0-{data.stem}-seed{seed}-q{questions}{f'-from{first}' if first else ''}.jsonl"
        self.traces: dict[int, Any] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                rec = json.loads(line)
                self.traces[rec["q"]] = Trace.from_dict(rec["trace"])

    def get(self, q: int) -> Any:
        return self.traces.get(q)

    def put(self, q: int, trace: Any) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as fh:
            fh.write(json.dumps({"q": q, "trace": trace.to_dict()}) + "\n")
        self.traces[q] = trace
        return trace


def _spans(res: Any) -> list[Any]:
    return [(s.hit, s.local, s.prompt) for s in res.attribution] + [None] + [(s.hit, s.local, s.prompt) for s in res.causal]


def _flags(res: Any) -> list[Any]:
    return [t.success for t in res.tests] + [r.resolved for r in res.rounds] + [res.resolved]


def summarise_traceback(rows: list[dict[str, Any]], data: Path) -> dict[str, Any]:
    if not rows:
        return {"traceback_skipped": "no PAR events among the scanned questions"}

    def mean(key: str) -> float:
        return round(statistics.fmean(r[key] for r in rows), 3)

    opt, naive = sum(r["optimised_s"] for r in rows), sum(r["naive_s"] for r in rows)
    return {
        "traceback_events": len(rows),
        "traceback_data": data.name,
        "traceback_speedup": round(naive / opt, 2),
        "traceback_speedup_median_event": round(statistics.median(r["naive_s"] / r["optimised_s"] for r in rows), 2),
        "identical_spans": all(r["identical_spans"] for r in rows),
        "identical_success": all(r["identical_success"] for r in rows),
        "identical_answers": all(r["identical_answers"] for r in rows),
        "fpe_per_event": mean("optimised_fpe"),
        "naive_fpe_per_event": mean("naive_fpe"),
        "calls_per_event": mean("optimised_calls"),
        "naive_calls_per_event": mean("naive_calls"),
        "tests_per_event": mean("tests"),
        "optimised_s_per_event": mean("optimised_s"),
        "naive_s_per_event": mean("naive_s"),
        "fast_path_events": sum(r["paths"] == ["fast_path"] for r in rows),
        "char_f1": mean("char_f1"),
        "resolved_rate": mean("resolved"),
        "traceback_per_event": rows,
    }


# ---------------------------------------------------------------- table

def print_table(r: dict[str, Any]) -> None:
    """Every scalar result, with the issue's target where it has one."""
    cfg = r.get("config", {})
    print(f"ragsec bench speed (torch threads {cfg.get('torch_threads', '?')}, quick={cfg.get('quick', '?')})")
    print(f"{'key':<34} {'value':>14}  target")
    for k, v in r.items():
        if k == "config" or isinstance(v, (list, dict)):
            continue
        target = TARGETS.get(k)
        mark = ""
        if target and isinstance(v, (int, float)):
            ok = v >= target[1] if target[0] == ">=" else v <= target[1]
            mark = f"{target[0]} {target[1]:g}  {'met' if ok else 'NOT met'}"
        print(f"{k:<34} {_fmt(v):>14}  {mark}")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)
