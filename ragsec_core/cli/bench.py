"""`ragsec bench ...`: the flags of every benchmark command. The runs live in `ragsec_core.bench` (one
module per command with a `cmd_*(args) -> int`, callable from Python with an `argparse.Namespace`); each
is imported only when its command runs, so the benchmark modules import the model stack at module level
and `ragsec --help` still loads none of it."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from ragsec_core.bench.options import ATTACK_FORMS, PLANT_MODES, SPEED_DATA, SPEED_SECTIONS
from ragsec_core.chameleon.options import OPTIMISERS, SLEEPER_FORMS
from ragsec_core.cli.monitor import add_monitor_parser
from ragsec_core.cli.options import add_corpus_args, add_endpoint_args, add_index_args, add_retrieval_args
from ragsec_core.data.spans import DEFAULT_MASK_MODE, MASK_MODES
from ragsec_core.data.trace import DEFAULT_TRIGGER, TRIGGERS
from ragsec_core.traceback.baselines import METHODS
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE, OBJECTIVES


def _command(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """`ragsec_core.bench.<module>.<name>`, imported when the command runs."""

    def run(args: argparse.Namespace) -> int:
        command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"ragsec_core.bench.{module}"), name)
        return command(args)

    return run


def _add_scale_args(p: argparse.ArgumentParser, threads: bool = True) -> None:
    """`--ray` (and `--threads` unless the command has its own): fan the run out on a Ray cluster."""
    p.add_argument("--ray", default=None, metavar="auto|ADDRESS",
                   help="run on a Ray cluster ('auto': the one this machine belongs to, or its address host:port); "
                        "one actor per --threads CPUs, the same results file as a serial run of the same --threads "
                        "(needs the [scale] extra)")
    if threads:
        p.add_argument("--threads", type=int, default=None,
                       help="torch CPU threads of the run and of each Ray actor (default: torch's own; with --ray 1)")


def add_bench_parsers(subparsers: Any) -> None:
    """`ragsec bench traceback | dscan | chameleon | monitor | speed`."""
    _traceback(subparsers)
    _dscan(subparsers)
    _chameleon(subparsers)
    add_monitor_parser(subparsers)
    _speed(subparsers)


def _traceback(subparsers: Any) -> None:
    p = subparsers.add_parser("traceback", help="RAGCharacter Pass-1 benchmark (Char F1 / IoU / FPR)")
    p.add_argument("--data", default=None, help="attack file (PoisonedRAG / Stealthy / list format); required "
                   "except with --rescore, --rerun or --merge")
    add_corpus_args(p, help="clean corpus (default: the context passages of the data file's first --limit "
                            "questions, or --corpus-questions)", variant=False)
    p.add_argument("--corpus-questions", type=int, default=None, metavar="N",
                   help="the default clean corpus from the context passages of the first N questions (N >= --limit), "
                        "not --limit's: a split run (--first-question, --limit) retrieves from the whole run's corpus")
    p.add_argument("--mode", choices=PLANT_MODES, default=PLANT_MODES[0])
    p.add_argument("--attack-form", choices=ATTACK_FORMS, default=ATTACK_FORMS[0])
    p.add_argument("--poisons-per-query", type=int, default=1)
    add_retrieval_args(p, alpha=1.0, k=5, use=True)
    p.add_argument("--mask-mode", choices=MASK_MODES, default=DEFAULT_MASK_MODE)
    p.add_argument("--trigger", choices=list(TRIGGERS), default=DEFAULT_TRIGGER,
                   help="which Pass-0 outcome is an event: PAR (the target adopted from a used chunk); LOST (the "
                        "correct answer lost, an untargeted attack: use it with --objective restore)")
    p.add_argument("--objective", choices=OBJECTIVES, default=DEFAULT_OBJECTIVE,
                   help="when a replay undoes the event: event (the logged answer gone), oracle (the target gone), "
                        "restore (a correct answer back)")
    p.add_argument("--snapshot", action="store_true",
                   help="give Pass-1 the clean corpus as the analyst's trusted snapshot: each round first reverts "
                        "the changes since it (substitution, not deletion)")
    p.add_argument("--snapshot-drift", type=float, default=0.0, metavar="RATE",
                   help="with --snapshot: an older snapshot, in which this fraction of the clean documents predates "
                        "a benign edit (a sentence added, a typo fixed, a sentence removed since): measures what "
                        "Pass-1 reports of edits that are not the poison")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--first-question", type=int, default=0,
                   help="start at this question (the seeded plants of earlier ones are still drawn): split a run")
    p.add_argument("--merge", nargs="+", default=None, metavar="RESULTS",
                   help="only merge result files of one split run (same config) into --out and print the table")
    p.add_argument("--seed", type=int, default=0)
    add_endpoint_args(p)
    p.add_argument("--methods", default="ragcharacter",
                   help=f"comma-separated: {','.join(METHODS)} (all run on the same events)")
    p.add_argument("--judge-model", default=None,
                   help="local HF model folder or .gguf for the baselines' judge/proxy (default: the victim LM)")
    p.add_argument("--ppl-quantile", type=float, default=0.95, help="PPL cutoff: this quantile of benign chunks")
    p.add_argument("--ppl-sample", type=int, default=100, help="benign corpus chunks sampled for the PPL cutoff")
    p.add_argument("--out", default=None,
                   help="write results JSON here (atomically, after every question); an incomplete file of the same "
                        "configuration is continued")
    p.add_argument("--traces", default=None, metavar="DIR",
                   help="also store every event's trace, Pass-1 result and scores in DIR (for --rescore)")
    p.add_argument("--rescore", default=None, metavar="DIR",
                   help="only re-score the events stored in DIR with the current attribution rule, without the "
                        "model, and print live against re-scored (--out: write the comparison)")
    p.add_argument("--rerun", default=None, metavar="DIR",
                   help="only run Pass-1 again, live, on the events stored in DIR (their Pass-0 traces and gold kept) "
                        "and print live against re-run; a run traced against a snapshot needs its --data, --limit, "
                        "--corpus-questions, --snapshot, --snapshot-drift and --seed (--traces: store the re-run events "
                        "in another folder)")
    p.add_argument("--only", type=int, nargs="+", default=None, metavar="Q",
                   help="with --rerun: only these questions (their numbers in the run)")
    p.add_argument("--read", action="store_true",
                   help="with --rescore: take the LM readings the current rule asks for that DIR lacks with the "
                        "local model (otherwise those sentences count as host)")
    _add_scale_args(p)
    p.set_defaults(func=_command("traceback", "cmd_bench_traceback"))


def _dscan(subparsers: Any) -> None:
    p = subparsers.add_parser("dscan", help="D-SCAN attention-collapse detector: evaluate and train")
    p.add_argument("--data", required=True, help="Stealthy-Attacks JSON (records with question, context, adv_texts)")
    p.add_argument("--n-samples", type=int, default=10, help="answers per prompt (1 greedy + N-1 sampled)")
    p.add_argument("--limit", type=int, default=100, help="number of questions (each gives a clean/poisoned pair)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results.json")
    p.add_argument("--max-new-tokens", type=int, default=16)
    p.add_argument("--temperature", type=float, default=0.7, help="temperature of the sampled answers")
    p.add_argument("--raw", default=None, help="resumable raw-statistics cache (default: OUT.raw.jsonl)")
    p.add_argument("--length-matched", action="store_true",
                   help="control: clean passages at the poisoned positions cut/extended to the poisoned passages' "
                        "lengths (pass --raw of the normal run to reuse its poisoned prompts)")
    p.add_argument("--question-matched", action="store_true",
                   help="control: as --length-matched, and the clean passages at the poisoned positions also begin "
                        "with the question, as the black-box poisons do")
    p.add_argument("--train-controls", action="store_true",
                   help="train and select on every prompt kind of a question (clean, length- and question-matched "
                        "clean, the poison with and without the question in front) and report each pair; the "
                        "threshold is set at FPR <= 10%% on the question-matched clean prompts")
    p.add_argument("--no-zero-shot", action="store_true", help="skip the zero-shot baseline (one extra pass per prompt)")
    p.add_argument("--save-detector", default=None, help="write the detector trained on all pairs to this JSON")
    p.add_argument("--record-transfer", default=None, metavar="DETECTOR",
                   help="write this run's evaluation of the detector file DETECTOR into its own info.transfer "
                        "(run on data it was not trained on)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads, also of each Ray actor (1 is fastest on a shared machine: OpenMP spin-waits "
                        "under contention)")
    _add_scale_args(p, threads=False)
    p.set_defaults(func=_command("dscan", "cmd_dscan"))


def _chameleon(subparsers: Any) -> None:
    p = subparsers.add_parser("chameleon", help="Semantic Chameleon: sleeper/trigger attack vs hybrid retrieval")
    add_corpus_args(p, variant=False, repeat=True,
                    help="corpus (sample name, folder, .jsonl, .csv, attack .json; repeat to merge); known poisons "
                         "are dropped (default: the sample security corpus 'secops')")
    add_index_args(p)
    p.add_argument("--compare-in-process", action="store_true",
                   help="with --index: also evaluate every pair on ragsec's own in-process index, side by side")
    p.add_argument("--scenarios", default=None,
                   help="scenario JSON list (default: the corpus's shipped chameleon_scenarios.json, e.g. "
                        "sample_corpora/secops/; the built-in security scenarios for other corpora)")
    p.add_argument("--trials", type=int, default=5,
                   help="attack trials, cycling over scenarios (paper: 25-50; 0 with --joint-trials: the joint attack only)")
    p.add_argument("--method", choices=OPTIMISERS, default=OPTIMISERS[0], help="optimiser of the main attack")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--candidates", type=int, default=5)
    p.add_argument("--max-modified", type=float, default=0.15, help="fraction of word tokens that may change")
    p.add_argument("--ppl-cap", type=float, default=100.0, help="perplexity cap under the local LM")
    p.add_argument("--no-fluency", action="store_true", help="skip the perplexity filter (no LLM in the loop)")
    p.add_argument("--sleeper-form", choices=SLEEPER_FORMS, default=SLEEPER_FORMS[0], help="eq. 1 reading (see docs)")
    p.add_argument("--joint-trials", type=int, default=None, help="trials of the joint attack (default: --trials; 0 skips)")
    p.add_argument("--keyword-trials", type=int, default=None, help="trials reused by the keyword sweep (default: all; 0 skips)")
    p.add_argument("--no-e2e", action="store_true", help="skip the end-to-end LLM evaluation")
    p.add_argument("--e2e-scenarios", type=int, default=None, help="scenarios run end-to-end (default: all)")
    p.add_argument("--e2e-tokens", type=int, default=32, help="new tokens per end-to-end answer")
    p.add_argument("--no-detectors", action="store_true", help="skip the corpus monitor evaluation")
    p.add_argument("--stealth-threshold", type=float, default=0.30)
    p.add_argument("--qpd-threshold", type=float, default=None, help="default 0.20 (secops) / 0.15 (others)")
    p.add_argument("--queries-per-day", type=int, default=10_000, help="query volume for alerts/day")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--max-minutes", type=float, default=None, help="stop starting new trials after this long")
    p.add_argument("--out", default="chameleon_results.json",
                   help="results JSON; an unfinished one of the same settings is resumed")
    _add_scale_args(p)
    p.set_defaults(func=_command("chameleon", "cmd_chameleon"))


def _speed(subparsers: Any) -> None:
    p = subparsers.add_parser("speed", help="performance: Pass-1 replay, retrieval, attention capture, start-up")
    p.add_argument("--out", default=None, help="write results JSON here")
    p.add_argument("--quick", action="store_true", help="small sizes: a few minutes instead of ~half an hour")
    p.add_argument("--only", default=",".join(SPEED_SECTIONS), help=f"comma-separated sections of {SPEED_SECTIONS}")
    p.add_argument("--data", default=str(SPEED_DATA), help="attack file for the traceback events")
    p.add_argument("--events", type=int, default=None, help="traced events (default 20, quick 3)")
    p.add_argument("--questions", type=int, default=100, help="at most this many questions scanned for events")
    p.add_argument("--first-question", type=int, default=0, help="scan from this question (split a run over processes)")
    p.add_argument("--last-question", type=int, default=None, help="stop before this question (the other end of a split)")
    p.add_argument("--sizes", default=None, help="BM25 corpus sizes (default 20000,100000)")
    p.add_argument("--queries", type=int, default=None, help="retrieval queries (default 100, quick 20)")
    p.add_argument("--attn-tokens", default=None, help="attention prompt lengths (default 600,2000; quick 600)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chroma", nargs="?", const="embedded", default=None, metavar="chroma://HOST:PORT",
                   help="also time hybrid search with a Chroma collection as the dense side beside the in-process "
                        "index (a served Chroma, or an embedded folder under the cache when no address is given)")
    p.add_argument("--chroma-sizes", default="100000,1000000", help="passages for --chroma (built once, cached)")
    p.add_argument("--merge", nargs="*", default=None, help="only merge these result files and print the table")
    p.set_defaults(func=_command("speed", "cmd_bench_speed"))

