"""Stored benchmark events with Pass-1 run again live: measure a change to which replays Pass-1 makes.

`--rescore` redraws the boundary from the replays a run logged, without the model. A change to *which
replays are made* (a new stage, a budget, the unit that is pruned) needs the model again, but not Pass-0,
the planting or the gold replay: `bench traceback --rerun DIR` keeps each stored event's trace (its
prompt and logged answer) and its gold, runs RAGCharacter's Pass-1 on it with the current code, scores it
as the live run does, and prints the stored score beside the new one. Unchanged code gives the same rows
(greedy replays). Each event is replayed with the trigger, objective and masking it was traced with; a
run traced against a snapshot needs the flags that drew it (`--data`, `--limit`, `--snapshot`,
`--snapshot-drift`, `--seed`), and a snapshot that is not the one the events were traced against is
refused, as is a victim that is not the model that answered them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core.bench.attacks import AttackRecord, load_attack
from ragsec_core.bench.causation import caused_line
from ragsec_core.bench.drift import analyst_snapshot
from ragsec_core.bench.methods import score
from ragsec_core.bench.planting import clean_corpus
from ragsec_core.bench.rescore import caused, compare, load_events, objective, print_comparison, store_event
from ragsec_core.data.corpus import Corpus
from ragsec_core.data.trace import Trace
from ragsec_core.models.endpoint import EndpointLLM, config_from_flags
from ragsec_core.models.llm import LLM, load_llm
from ragsec_core.traceback.baselines import MethodContext, get
from ragsec_core.traceback.result import TracebackResult
from ragsec_core.traceback.snapshot import Snapshot


def run_corpus(records: list[AttackRecord], args: argparse.Namespace) -> Corpus:
    """The clean corpus a `bench traceback` run's flags give, `records` being all of `--data`'s: `--corpus`,
    else the context passages of the first `--corpus-questions` records, by default the first `--limit`.
    The default follows `--limit` so that a run's corpus holds its own questions' passages;
    `--corpus-questions` keeps a split run's corpus the whole run's, so that its prompts (the host drawn,
    the passages retrieved) are too."""
    return clean_corpus(records[: args.corpus_questions or args.limit], args.corpus)


def trusted_snapshot(args: argparse.Namespace) -> Snapshot | None:
    """The snapshot the run's flags draw (`--snapshot`: the run's clean corpus, `run_corpus`, or its older
    copy with `--snapshot-drift`), as `bench traceback` draws it; None without it."""
    if not args.snapshot:
        return None
    if not args.data:
        raise RagsecError("--rerun with --snapshot needs the run's --data (and its --limit, --corpus-questions, --corpus, "
                          "--snapshot-drift, --seed)")
    clean = run_corpus(load_attack(Path(args.data), args.attack_form), args)
    return analyst_snapshot(clean, args.snapshot_drift, args.seed)[0]


def stored_events(folder: str | Path, only: list[int] | None) -> list[dict[str, Any]]:
    """The stored events with a Pass-1 result (those of questions `only` when given); none is bad input."""
    events = [e for e in load_events(folder) if e.get("pass1") and (not only or e["question"] in only)]
    if not events:
        raise RagsecError(f"'{folder}': no stored event with a RAGCharacter result" + (f" among questions {only}" if only else ""))
    return events


def check_snapshot(events: list[dict[str, Any]], snapshot: Snapshot | None) -> None:
    """Refuse events traced against another snapshot than these flags draw (or none): their replays would
    revert to other text. Checked before any model loads."""
    given = snapshot.label() if snapshot else ""
    for e in events:
        stored = e["pass1"].get("snapshot", "")
        if stored != given:
            raise RagsecError(f"question {e['question']} was traced against snapshot {stored or '(none)'!r}; these "
                              f"flags give {given or '(none)'!r}: use the run's --data, --limit, --snapshot, "
                              "--snapshot-drift and --seed")


def check_victim(events: list[dict[str, Any]], victim: str) -> None:
    """Refuse events another model answered: a replay by this one would not be their counterfactual."""
    for e in events:
        answered = str(e["trace"].get("model", {}).get("id", "?"))
        if answered != victim:
            raise RagsecError(f"question {e['question']} was answered by {answered!r}; this rerun's victim is "
                              f"{victim!r} (give the run's endpoint flags)")


def rerun_event(event: dict[str, Any], trace: Trace, llm: LLM | EndpointLLM, judge: LLM, snapshot: Snapshot | None,
                seed: int) -> tuple[dict[str, Any], TracebackResult]:
    """(RAGCharacter's new scored row, its new Pass-1 result) for one stored event and its `trace`, replayed
    with the trigger, objective and masking it was traced with."""
    p = event["pass1"]
    ctx = MethodContext(llm, judge, None, seed=seed, mask_mode=p["mask_mode"], objective=p["objective"],
                        trigger=p["trigger"], snapshot=snapshot)
    row = score(trace, get("ragcharacter").run(trace, ctx))
    return row, ctx.pass1(trace)[0]  # cached by the run above: no replay


def rerun(events: list[dict[str, Any]], llm: LLM | EndpointLLM, judge: LLM, snapshot: Snapshot | None,
          seed: int = 0, store: str | None = None) -> dict[str, Any]:
    """Live and re-run summaries over stored events (`stored_events`, checked by `check_snapshot` and
    `check_victim`), also over the events the planted text caused, and the events whose score or cost
    moved. `store`: a folder that receives each re-run event (new Pass-1 and scores, the stored trace and
    gold), for `--rescore`."""
    pairs = []
    for e in tqdm(events, desc="rerun Pass-1", unit="event", file=sys.stderr):
        trace = Trace.from_dict(e["trace"])
        row, pass1 = rerun_event(e, trace, llm, judge, snapshot, seed)
        if store:
            store_event(store, e["question"], e["id"], trace, pass1, {"ragcharacter": row}, e.get("gold"))
        pairs.append((e | {"caused": caused(e)}, row))
    moved = [{"question": e["question"], "id": e["id"], "live": e["methods"]["ragcharacter"]["char_f1"], "rerun": n["char_f1"],
              "live_fpe": e["methods"]["ragcharacter"]["fpe"], "rerun_fpe": n["fpe"]}
             for e, n in pairs if abs(n["char_f1"] - e["methods"]["ragcharacter"]["char_f1"]) > 1e-9
             or abs(n["fpe"] - e["methods"]["ragcharacter"]["fpe"]) > 1e-9]
    return compare(pairs, "rerun", objective(events[0])) | {"moved": moved}


def cmd_rerun(args: argparse.Namespace) -> int:
    if args.traces and Path(args.traces).resolve() == Path(args.rerun).resolve():
        raise RagsecError("--traces with --rerun must be another folder: the stored events are the comparison's live side")
    events = stored_events(args.rerun, args.only)
    snapshot = trusted_snapshot(args)
    check_snapshot(events, snapshot)  # before the model loads
    endpoint = config_from_flags(args)
    llm: LLM | EndpointLLM = EndpointLLM(endpoint) if endpoint else load_llm()
    check_victim(events, llm.model_id)  # every event is checked before the first replay
    judge = load_llm(args.judge_model) if args.judge_model else llm if isinstance(llm, LLM) else load_llm()
    out = {"folder": args.rerun} | rerun(events, llm, judge, snapshot, args.seed, args.traces)
    print_comparison(out, "rerun")
    print(f"{len(out['moved'])} event(s) changed Char F1 or forward-pass equivalents with the current Pass-1")
    print(caused_line(out["caused"]["rerun"], "ragcharacter") + " (re-run)")
    if args.out:
        write_text_atomic(args.out, json.dumps(out, indent=2))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
