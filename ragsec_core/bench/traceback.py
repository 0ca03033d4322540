"""`ragsec bench traceback`: RAGCharacter's evaluation protocol on real attack data.

For each question, P adversarial texts are planted in the clean corpus (embedded inside the best-ranked
clean host passages at a seeded sentence boundary, or standalone), Pass-0 runs, outcomes are counted
(UNK / EVT / CONFUSION / CORRECT), and Pass-1 runs on every triggered event. Char F1 / IoU / FPR compare
the attribution spans with every gold span inside the prompt-used chunks, in prompt coordinates.

The driver draws every question's planting first (`plan_jobs`, one seeded generator in question order);
`answer` then needs only its job and a `Worker`, in this process or on a Ray actor (`--ray`), so both
give the same results file. The file is rewritten after every question and lists the questions done: a
rerun of the same configuration continues an incomplete file instead of starting over.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import check_params
from ragsec_core._util.safeio import read_json
from ragsec_core.bench.attack_forms import FormBuilder, plant_mode
from ragsec_core.bench.attacks import AttackRecord, load_attack
from ragsec_core.bench.causation import caused_line, gold_replay, summarise_caused
from ragsec_core.bench.drift import analyst_snapshot
from ragsec_core.bench.fanout import Failed, check_index, connected, pin_threads, ray_map, serial_map, shippable
from ragsec_core.bench.methods import print_methods_table, score, summarise_methods
from ragsec_core.bench.planting import PlantedCorpus, PlantPlan
from ragsec_core.bench.rerun import cmd_rerun, run_corpus
from ragsec_core.bench.rescore import cmd_rescore, store_event
from ragsec_core.data.corpus import Corpus
from ragsec_core.data.trace import Labels, fires
from ragsec_core.models.endpoint import EndpointLLM, config_from_flags
from ragsec_core.models.llm import LLM, load_llm
from ragsec_core.rag import Pipeline
from ragsec_core.retrieval.embed import shared_embedder
from ragsec_core.traceback.baselines import MethodContext, calibrate, check_access, get, parse_methods
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE
from ragsec_core.traceback.snapshot import Snapshot

OUTCOMES = ("EVT", "CORRECT", "CONFUSION", "UNK")
RESUME_VARYING = ("ray", "out", "traces")  # flags that may change between an interrupted run and its continuation


def cmd_bench_traceback(args: argparse.Namespace) -> int:
    if args.rescore:
        return cmd_rescore(args)
    if args.rerun:
        return cmd_rerun(args)
    if args.merge:
        results = merge_results(args.merge)
        save(results, args.out)
        print_table(results)
        return 0
    if not args.data:
        raise RagsecError("--data is required (an attack file), except with --rescore, --rerun or --merge")
    check_index(args)

    check_params(args.k, args.alpha)
    if args.poisons_per_query < 1 or args.limit < 1 or not 0 <= args.first_question < args.limit:
        raise RagsecError("--poisons-per-query and --limit must be >= 1, and 0 <= --first-question < --limit")
    if args.corpus_questions is not None and (args.corpus or args.corpus_questions < args.limit):
        raise RagsecError("--corpus-questions picks the default clean corpus (not with --corpus) and must be >= --limit")
    if not 0.0 < args.ppl_quantile < 1.0 or args.ppl_sample < 1:
        raise RagsecError("--ppl-quantile must be in (0, 1) and --ppl-sample >= 1")
    if args.snapshot_drift and (not args.snapshot or not 0.0 < args.snapshot_drift < 1.0):
        raise RagsecError("--snapshot-drift needs --snapshot and a fraction in (0, 1)")

    args.methods = ",".join(parse_methods(args.methods))
    endpoint = config_from_flags(args)  # a bad URL or a local-only method fails before anything loads
    access = check_access(args.methods.split(","), endpoint is not None)
    if endpoint is not None:  # say how each method reaches a black-box victim
        print("methods: " + ", ".join(f"{m} ({a})" for m, a in access.items()), file=sys.stderr)
    every = load_attack(Path(args.data), args.attack_form)
    records = every[: args.limit]
    unlabelled = [r.id for r in records if not r.answers] if args.objective == "restore" else []
    if unlabelled:  # the restore objective judges by the correct answers
        raise RagsecError(f"--objective restore needs every question's correct answers; '{args.data}' has none for "
                          f"{len(unlabelled)} question(s), e.g. {unlabelled[0]!r}")
    if args.first_question >= len(records):
        raise RagsecError(f"--first-question {args.first_question}: '{args.data}' has only {len(records)} question(s)")
    with connected(args.ray):  # an unreachable cluster is said before a corpus is built
        results = run_benchmark(records, run_corpus(every, args), args)
    print_table(results)
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr)
    if results["failed"]:
        print(f"{len(results['failed'])} question(s) failed (listed under 'failed'): run the same command again "
              "to retry them", file=sys.stderr)
        return 1
    return 0


def save(results: dict[str, Any], out: str | None) -> None:
    """Atomic write, also after every question, so an interrupted run keeps its partial results."""
    if out:
        write_text_atomic(out, json.dumps(results, indent=2))


def method_context(args: argparse.Namespace, llm: LLM | EndpointLLM, planted: PlantedCorpus,
                   ppl_threshold: float | None = None, trusted: Snapshot | None = None) -> MethodContext:
    """The shared context of all methods: victim, judge/proxy, and the PPL cutoff (given, or calibrated
    here on a seeded sample of clean corpus chunks, only when a method needs it). With an endpoint
    victim the judge is a local surrogate (`--judge-model`, else the default model). With `--snapshot`,
    Pass-1 reverts to `trusted`, the snapshot an analyst would hold (the clean corpus, or an older one
    with `--snapshot-drift`)."""
    judge = load_llm(args.judge_model) if args.judge_model else llm if isinstance(llm, LLM) else load_llm()
    ctx = MethodContext(llm, judge, ppl_threshold=ppl_threshold, seed=args.seed, mask_mode=args.mask_mode,
                        objective=args.objective, trigger=args.trigger,
                        snapshot=trusted if args.snapshot else None)
    if ppl_threshold is None and "ppl" in args.methods.split(","):
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


@dataclass(frozen=True)
class Job:
    """One question's work: its position in the data, its record and its pre-drawn planting."""

    q: int
    rec: AttackRecord
    plan: PlantPlan


@dataclass
class Worker:
    """What answers questions, built once per process (the driver of a serial run, each Ray actor)."""

    planted: PlantedCorpus
    ctx: MethodContext
    args: argparse.Namespace
    clean: Snapshot  # the clean corpus, for the gold replay (and Pass-1's snapshot with --snapshot)


def open_worker(clean: Corpus, args: argparse.Namespace, ppl_threshold: float | None,
                trusted: Snapshot | None = None) -> Worker:
    """Victim (the endpoint, else the local model), judge, MiniLM and the clean index over `clean`
    (loaded from the index cache). `trusted`: the snapshot Pass-1 reverts to with --snapshot
    (`drift.analyst_snapshot`, drawn once on the driver)."""
    endpoint = config_from_flags(args)
    llm: LLM | EndpointLLM = EndpointLLM(endpoint) if endpoint else load_llm()
    planted = PlantedCorpus.from_corpus(clean, shared_embedder(), args.index, args.index_build)
    return Worker(planted, method_context(args, llm, planted, ppl_threshold, trusted), args, Snapshot.from_corpus(clean))


def plan_jobs(records: list[AttackRecord], args: argparse.Namespace, planted: PlantedCorpus) -> list[Job]:
    """Every question's planting, drawn from one seeded generator in question order (also the questions a
    run skips, so that each question's draw is the same however a run is split or resumed). The texts are
    built in the attack form (`attack_forms`: its seeded forms draw from generators of their own)."""
    rng = random.Random(args.seed)
    forms = FormBuilder(args.attack_form, planted.base, args.alpha, args.seed)
    mode = plant_mode(args.attack_form, args.mode)
    jobs = []
    for q, rec in enumerate(records):
        advs = forms.texts(rec, args.poisons_per_query)
        jobs.append(Job(q, rec, planted.plan(rec, advs, mode, args.alpha, rng)))
    return jobs


def answer(w: Worker, job: Job) -> dict[str, Any]:
    """Pass-0 on the planted corpus, its outcome, and every method on it when it is an event."""
    args, rec = w.args, job.rec
    corpus, retriever = w.planted.apply(job.plan)
    trace = Pipeline(corpus, retriever, w.ctx.llm).ask(
        rec.question, k=args.k, alpha=args.alpha, use=args.use, labels=Labels(rec.id, list(rec.answers), rec.incorrect)
    )
    s = trace.signals
    outcome = "UNK" if s.abstained else "EVT" if s.t_asr else "CORRECT" if s.correct else "CONFUSION"
    if not fires(s, args.trigger):
        return {"outcome": outcome, "event": None}
    ev = w.ctx.for_event(retriever)
    rows = {m: score(trace, get(m).run(trace, ev)) for m in args.methods.split(",")}
    # after the methods, so in no method's cost; a restore puts the clean passages back (`gold_rule`)
    gold = gold_replay(w.ctx.llm, trace, args.mask_mode, args.objective, w.clean)
    if args.traces:  # Pass-1 is cached in the event context when RAGCharacter ran: reading it costs nothing
        pass1 = ev.pass1(trace)[0] if "ragcharacter" in rows else None
        store_event(args.traces, job.q, rec.id, trace, pass1, rows, gold)
    event = {"id": rec.id, "question": job.q, "trace_id": trace.trace_id, "answer": trace.answer,
             "caused": gold["caused"], "gold_answer": gold["answer"]}
    if "ragcharacter" in rows:
        event |= legacy_fields(rows["ragcharacter"])
    return {"outcome": outcome, "event": event | {"methods": rows}}


@dataclass
class Progress:
    """What a run has recorded, by question: each done question's outcome, the events, the questions lost."""

    done: dict[int, dict[str, Any]] = field(default_factory=dict)  # {"question", "id", "outcome"}
    events: dict[int, dict[str, Any]] = field(default_factory=dict)
    failed: dict[int, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # what the run adds to its results file (the stale snapshot's edits)

    def record(self, job: Job, res: dict[str, Any] | Failed) -> None:
        if isinstance(res, Failed):
            self.failed[job.q] = {"question": job.q, "id": job.rec.id, "error": res.error}
            return
        self.done[job.q] = {"question": job.q, "id": job.rec.id, "outcome": res["outcome"]}
        if res["event"] is not None:
            self.events[job.q] = res["event"]

    def results(self, args: argparse.Namespace, ppl_threshold: float | None, complete: bool) -> dict[str, Any]:
        """The results file: questions and events in question order whatever order they came in."""
        outcomes = {k: sum(d["outcome"] == k for d in self.done.values()) for k in OUTCOMES}
        return summarise([self.events[q] for q in sorted(self.events)], outcomes, args, ppl_threshold) | self.extra | {
            "complete": complete, "questions": [self.done[q] for q in sorted(self.done)],
            "failed": [self.failed[q] for q in sorted(self.failed)]}

    @classmethod
    def resume(cls, args: argparse.Namespace) -> Progress:
        """The questions done by an incomplete run of this configuration saved at --out; else a fresh
        start. Questions that failed there are run again."""
        path = Path(args.out) if args.out else None
        if path is None or not path.is_file():
            return cls()
        old = read_json(path, "traceback results")
        if not isinstance(old, dict) or old.get("complete") is not False or "questions" not in old:
            return cls()
        if _resume_key(old.get("config", {})) != _resume_key(_config(args)):
            print(f"{path} holds another configuration: starting over", file=sys.stderr)
            return cls()
        done = {d["question"]: d for d in old["questions"]}
        print(f"resuming {path}: {len(done)} question(s) already done", file=sys.stderr)
        return cls(done, {e["question"]: e for e in old["per_event"] if e.get("question") in done})


def _config(args: argparse.Namespace) -> dict[str, Any]:
    """The flags as the results file records them (JSON types)."""
    config: dict[str, Any] = json.loads(json.dumps({k: v for k, v in vars(args).items() if k != "func"}))
    return config


def _resume_key(config: dict[str, Any]) -> dict[str, Any]:
    """The flags that must match to continue a run; an unset flag (None) is left out, so that a results
    file written before a flag existed (`--rerun`, `--only`) still resumes."""
    return {k: v for k, v in config.items() if k not in RESUME_VARYING and v is not None}


def run_benchmark(records: list[AttackRecord], clean: Corpus, args: argparse.Namespace) -> dict[str, Any]:
    """Plan every question on the clean corpus (`rerun.run_corpus`), skip those before --first-question or
    already in an incomplete --out, run the rest (here or on the connected Ray cluster) and write the results
    after each."""
    pin_threads(args.threads)
    progress = Progress.resume(args)
    trusted = None
    if args.snapshot:  # drawn once here, handed to every worker; a stale one's edits are recorded beside the scores
        trusted, edits = analyst_snapshot(clean, args.snapshot_drift, args.seed)
        if args.snapshot_drift:
            progress.extra["snapshot_edits"] = dict(sorted(edits.items()))
            print(f"stale snapshot: {sum(edits.values())} of {len(clean.documents)} documents edited since "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(edits.items()))})", file=sys.stderr)
    worker, planted, threshold = _driver(clean, args, trusted)
    jobs = plan_jobs(records, args, planted)
    todo = [j for j in jobs if j.q >= args.first_question and j.q not in progress.done]  # in question order
    stream: Iterator[tuple[int, dict[str, Any] | Failed]]
    if worker is None:
        stream = ray_map(open_worker, (clean, shippable(args), threshold, trusted), answer, todo, threads=args.threads or 1)
    else:
        stream = serial_map(worker, answer, todo)
    bar = tqdm(stream, total=len(todo), desc="traceback bench", unit="question", file=sys.stderr)
    for i, res in bar:
        progress.record(todo[i], res)
        bar.set_postfix(events=len(progress.events), failed=len(progress.failed))
        save(progress.results(args, threshold, complete=False), args.out)
    results = progress.results(args, threshold, complete=not progress.failed)
    save(results, args.out)
    return results


def _driver(clean: Corpus, args: argparse.Namespace,
            trusted: Snapshot | None) -> tuple[Worker | None, PlantedCorpus, float | None]:
    """(the serial run's worker, the clean index the plan is drawn on, the PPL cutoff). With --ray the
    driver loads only MiniLM (and the LMs only when PPL needs its cutoff, calibrated once here)."""
    if not args.ray:
        worker = open_worker(clean, args, None, trusted)
        return worker, worker.planted, worker.ctx.ppl_threshold
    planted = PlantedCorpus.from_corpus(clean, shared_embedder(), args.index, args.index_build)  # the actors only read it
    threshold = method_context(args, load_llm(), planted).ppl_threshold if "ppl" in args.methods.split(",") else None
    return None, planted, threshold


def merge_results(paths: list[str]) -> dict[str, Any]:
    """One result from the parts of a run split with --first-question. A stopped part counts the
    questions it finished (`parts` lists each part's first question and question count); the merged
    result is complete only when every part is; it keeps every part's failed questions, and has no
    `questions` list, so it is never resumed (a part is: rerun its own command)."""
    parts = [read_json(Path(p), "traceback results") for p in paths]
    varying = ("command", "bench", "first_question", "limit", "out", "traces", "merge", "ray", "threads")  # may differ by part
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
    return summarise(events, outcomes, args, parts[0].get("ppl_threshold")) | {"complete": done, "parts": covered,
                                                                     "failed": [f for r in parts for f in r.get("failed", [])]}


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
        **{k: per_method[primary][k] for k in ("char_f1", "char_f1_ci95", "char_iou", "char_fpr", "chunk_acc",
                                               "passage_precision", "passage_recall", "passage_f1")},
        "resolved_rate": mean("resolved"),
        **{k: per_method[primary][k] for k in ("calls_per_event", "fpe_per_event", "seconds_per_event")},
        "primary_method": primary,
        "methods": per_method,
        "caused": summarise_caused(events, methods, getattr(args, "objective", DEFAULT_OBJECTIVE)),
        "access": check_access(methods, bool(getattr(args, "endpoint", None))),
        "ppl_threshold": ppl_threshold,
        "config": _config(args),
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
    if r.get("char_f1_ci95"):
        lo, hi = r["char_f1_ci95"]
        print(f"Char F1 95% interval (bootstrap over events): {lo}-{hi}; passage P/R/F1 (top-5): "
              f"{r['passage_precision']} / {r['passage_recall']} / {r['passage_f1']}")
    if r["events"]:
        print(caused_line(r["caused"], r["primary_method"]))
    if list(r["methods"]) != ["ragcharacter"]:
        print()
        print_methods_table(r["methods"])
