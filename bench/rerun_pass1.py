"""Re-run Pass-1 live on the events a `bench traceback --traces DIR` run stored, against the same stale
snapshot, to measure a change of Pass-1 without redoing Pass-0 (the answers and the gold stay the run's).

`--rescore` redraws the boundary offline from the logged replays; a change to *which replays are made*
(here: `Pass1._revert_alone`) needs the model again. `--failed-revert` keeps the events whose first revert
failed with two or more changed chunks, the ones `_revert_alone` can touch; `--questions` picks others
(r32: the events with two changed chunks of one document, which the document as the pruning unit touches).

Run: .venv/bin/python bench/rerun_pass1.py --data ../shared/data/ragdefender/garag_nq.json --attack-form garag \
         --limit 100 --snapshot-drift 0.2 --failed-revert bench/out/r31/garag-drift > bench/out/r32/garag-drift.jsonl
Prints one JSON line per event (stored and new stages, Char F1 / FPR against the stored gold, FPE).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragsec_core.bench.attacks import load_attack
from ragsec_core.bench.drift import stale_snapshot
from ragsec_core.bench.methods import gold_spans
from ragsec_core.bench.planting import clean_corpus
from ragsec_core.data.trace import Trace
from ragsec_core.models.llm import load_llm
from ragsec_core.traceback.metrics import char_scores
from ragsec_core.traceback.ragcharacter import run_pass1


def failed_revert(event: dict[str, Any]) -> bool:
    """The stored run's first revert left the event in place, with changes in two or more chunks."""
    first = next((t for t in event["pass1"]["tests"] if t["stage"] == "revert"), None)
    return first is not None and not first["success"] and len({s["hit"] for s in first["spans"]}) >= 2


def main() -> None:
    ap = argparse.ArgumentParser(description="Re-run Pass-1 live on the events of a --traces folder.")
    ap.add_argument("traces", type=Path, help="a --traces folder of bench traceback")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--attack-form", required=True)
    ap.add_argument("--limit", type=int, required=True, help="the run's --limit (it decides the clean corpus)")
    ap.add_argument("--snapshot-drift", type=float, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trigger", default="LOST")
    ap.add_argument("--objective", default="restore")
    ap.add_argument("--failed-revert", action="store_true", help="only events whose first revert failed (see above)")
    ap.add_argument("--questions", type=int, nargs="*", default=[], help="only these question indices")
    args = ap.parse_args()
    records = load_attack(args.data, args.attack_form)[: args.limit]
    snapshot, _ = stale_snapshot(clean_corpus(records, None), args.snapshot_drift, args.seed)
    llm = load_llm()
    for path in sorted(args.traces.glob("event-*.json")):
        event = json.loads(path.read_text())
        if (args.failed_revert and not failed_revert(event)) or (args.questions and event["question"] not in args.questions):
            continue
        trace = Trace.from_dict(event["trace"])
        res = run_pass1(llm, trace, args.trigger, args.objective, snapshot=snapshot)
        scores = char_scores([tuple(a.prompt) for a in res.attribution], gold_spans(trace))
        print(json.dumps({
            "question": event["question"], "caused": event["gold"]["caused"],
            "stored": {"stages": [t["stage"] for t in event["pass1"]["tests"]],
                       "char_f1": event["methods"]["ragcharacter"]["char_f1"],
                       "fpe": event["pass1"]["forward_pass_equivalents"]},
            "new": {"stages": [t.stage + ("+" if t.success else "-") for t in res.tests],
                    "paths": [r.path for r in res.rounds], "reported": len(res.attribution),
                    "char_f1": round(scores.f1, 4), "char_iou": round(scores.iou, 4), "char_fpr": round(scores.fpr, 4),
                    "fpe": res.forward_pass_equivalents},
        }), flush=True)


if __name__ == "__main__":
    main()
