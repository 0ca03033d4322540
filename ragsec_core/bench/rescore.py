"""Stored benchmark events, re-scored offline: iterate on the attribution rule without the model.

`bench traceback --traces DIR` writes one file per event (its Pass-0 trace, RAGCharacter's Pass-1
result, and every method's scored row). `bench traceback --rescore DIR` re-draws RAGCharacter's
attribution from each stored result with the current rule (`traceback.boundary.reattribute`: the
replays' verdicts are kept, only the boundary is recomputed), scores it as the live run does, and prints
the stored live score beside the re-score. With an unchanged rule the two agree exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core._util.safeio import read_json
from ragsec_core.bench.causation import caused_line, gold_replay, gold_rule, summarise_caused
from ragsec_core.bench.methods import score, summarise_method
from ragsec_core.data.spans import DEFAULT_MASK_MODE
from ragsec_core.data.trace import Trace
from ragsec_core.models.llm import LLM, load_llm
from ragsec_core.models.options import DEFAULT_BACKEND
from ragsec_core.traceback.artifact import result_from_dict
from ragsec_core.traceback.baselines import MethodResult
from ragsec_core.traceback.boundary import reattribute
from ragsec_core.traceback.evidence import Evidence, LiveEvidence
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE
from ragsec_core.traceback.result import TracebackResult

EVENT_GLOB = "event-*.json"
COMPARED = ("char_f1", "char_iou", "char_fpr", "chunk_acc", "passage_f1", "fpe_per_event")


def store_event(folder: str | Path, q: int, rec_id: str, trace: Trace, pass1: TracebackResult | None,
                rows: dict[str, Any], gold: dict[str, Any] | None = None) -> None:
    """One event's evidence, written atomically (an interrupted run never leaves half a file). `gold`: the
    benchmark's replay without the planted text (`causation.gold_replay`)."""
    record = {"question": q, "id": rec_id, "trace": trace.to_dict(), "pass1": pass1.to_dict() if pass1 else None,
              "methods": rows, "gold": gold}
    Path(folder).mkdir(parents=True, exist_ok=True)
    write_text_atomic(Path(folder) / f"event-{q:05d}.json", json.dumps(record, ensure_ascii=False))


def load_events(folder: str | Path) -> list[dict[str, Any]]:
    """The stored events in question order; a folder without any is bad input."""
    paths = sorted(Path(folder).glob(EVENT_GLOB))
    if not paths:
        raise RagsecError(f"'{folder}' holds no stored events ({EVENT_GLOB}): run bench traceback with --traces first")
    events = [read_json(p, "stored event") for p in paths]
    bad = [p.name for p, e in zip(paths, events) if not isinstance(e, dict) or "trace" not in e]
    if bad:
        raise RagsecError(f"not a stored event: {', '.join(bad[:3])}")
    return events


def rescore_event(event: dict[str, Any], reader: LLM | None = None) -> dict[str, Any] | None:
    """RAGCharacter's row for one stored event with the current rule; None when the run stored no Pass-1.
    The boundary reads the stored readings; a reading the rule asks for that the live run did not take
    is taken with `reader` when given, else it is missing (counted in the row's `missed_readings`); what the
    new readings cost is the row's `read_fpe` (forward-pass equivalents over the logged prompt, not in `fpe`)."""
    if not event.get("pass1"):
        return None
    trace = Trace.from_dict(event["trace"])
    result = result_from_dict(event["pass1"])
    evidence = LiveEvidence(reader, result.cohesion) if reader is not None else Evidence(result.cohesion)
    attribution = reattribute(trace, result, evidence)
    live = event["methods"].get("ragcharacter", {})
    res = MethodResult("ragcharacter", [r.hit for r in attribution], [(r.hit, (r.local[0], r.local[1])) for r in attribution],
                       calls=int(live.get("calls", result.model_calls)), seconds=float(live.get("seconds", 0.0)),
                       fpe=result.forward_pass_equivalents, details=live.get("details", {}))
    read = evidence.fpe(trace) if isinstance(evidence, LiveEvidence) else 0.0
    return score(trace, res) | {"missed_readings": evidence.missed, "read_fpe": round(read, 3)}


def caused(event: dict[str, Any], reader: LLM | None = None) -> bool | None:
    """Whether the planted text caused a stored event: its stored gold replay when that was judged by
    today's rule (`causation.gold_rule`, with or without the clean corpus; a folder without the rule's name
    was judged by `planted`); else taken now with `reader` (without the clean corpus, which a folder does not
    hold) when that is the model that answered, else None (not judged)."""
    gold = event.get("gold") or {}
    rules = {gold_rule(objective(event)), gold_rule(objective(event), clean=True)}
    if gold.get("caused") is not None and gold.get("rule", "planted") in rules:
        return bool(gold["caused"])
    if reader is None:
        return None
    trace = Trace.from_dict(event["trace"])
    if trace.model.get("id") != reader.model_id or trace.model.get("backend", DEFAULT_BACKEND) != DEFAULT_BACKEND:
        return None
    pass1 = event.get("pass1") or {}
    return gold_replay(reader, trace, pass1.get("mask_mode", DEFAULT_MASK_MODE), objective(event))["caused"]


def objective(event: dict[str, Any]) -> str:
    """The objective a stored event's Pass-1 ran with (how its gold replay was judged)."""
    return str((event.get("pass1") or {}).get("objective", DEFAULT_OBJECTIVE))


def rescore(folder: str | Path, reader: LLM | None = None) -> dict[str, Any]:
    """Live and re-scored summaries over the stored events (also over the events the planted text caused),
    and the events whose score moved."""
    pairs = []
    events = load_events(folder)
    judged = objective(events[0])
    for e in events:
        new = rescore_event(e, reader)
        if new is not None:
            pairs.append((e | {"caused": caused(e, reader)}, new))
    if not pairs:
        raise RagsecError(f"'{folder}': no stored event has a RAGCharacter result (run with --methods ragcharacter)")
    moved = [{"question": e["question"], "id": e["id"], "live": e["methods"]["ragcharacter"]["char_f1"], "rescored": n["char_f1"]}
             for e, n in pairs if abs(n["char_f1"] - e["methods"]["ragcharacter"]["char_f1"]) > 1e-9]
    return {"folder": str(folder)} | compare(pairs, "rescored", judged) | {
        "moved": moved, "missed_readings": sum(n["missed_readings"] for _, n in pairs),
        "read_fpe_per_event": round(sum(n["read_fpe"] for _, n in pairs) / len(pairs), 3)}


def compare(pairs: list[tuple[dict[str, Any], dict[str, Any]]], new: str, judged: str) -> dict[str, Any]:
    """Stored events (with `caused` judged) against RAGCharacter's new rows (`new`: rescored, rerun): both
    summaries, also over the events the planted text caused (`judged`: the objective), and the rows per event."""
    rows = [{"caused": e["caused"], "methods": {"ragcharacter": n}} for e, n in pairs]
    return {"live": summarise_method([e["methods"]["ragcharacter"] for e, _ in pairs]),
            new: summarise_method([n for _, n in pairs]),
            "caused": {"live": summarise_caused([e for e, _ in pairs], ["ragcharacter"], judged),
                       new: summarise_caused(rows, ["ragcharacter"], judged)},
            "per_event": [{"question": e["question"], "id": e["id"], "caused": e["caused"], "ragcharacter": n} for e, n in pairs]}


def print_comparison(out: dict[str, Any], new: str) -> None:
    """The stored live summary above the new one (`rescored`, `rerun`), column by column."""
    print(f"{'':<10} {'events':>6} " + " ".join(f"{c:>11}" for c in COMPARED))
    for name in ("live", new):
        s = out[name]
        print(f"{name:<10} {s['events']:>6} " + " ".join(f"{'-' if s[c] is None else s[c]:>11}" for c in COMPARED))


def cmd_rescore(args: argparse.Namespace) -> int:
    out = rescore(args.rescore, load_llm() if args.read else None)
    print_comparison(out, "rescored")
    print(f"{len(out['moved'])} event(s) changed Char F1 under the current rule")
    print(caused_line(out["caused"]["rescored"], "ragcharacter") + " (re-scored)")
    if args.read:
        print(f"the readings taken now cost {out['read_fpe_per_event']} forward-pass equivalents per event "
              "(not in the live fpe above)")
    if out["missed_readings"]:
        print(f"{out['missed_readings']} reading(s) the rule asked for were not stored (those sentences count as "
              "host): add --read to take them with the local model", file=sys.stderr)
    if args.out:
        write_text_atomic(args.out, json.dumps(out, indent=2))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
