"""Reading bench `results.json` files for the Benchmarks page, and a small in-process Chameleon run.

Three benches write results: `ragsec bench traceback`, `ragsec bench dscan` and `ragsec bench chameleon`.
Files are user-supplied, so every accessor tolerates missing keys and wrong types and raises one
`RagsecError` that says what is wrong, never a KeyError deep inside a plot.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import escape_controls
from ragsec_core.chameleon.attack import Encoder
from ragsec_core.chameleon.evaluate import (
    ALPHAS,
    KS,
    aggregate,
    build_pair,
    evaluate_retrieval,
    inject,
)

KINDS = ("traceback", "dscan", "chameleon")
MAX_RESULTS_BYTES = 50 * 1024 * 1024


def parse_results(data: bytes, name: str) -> dict[str, Any]:
    """JSON object from an upload or file, with a message that tells the user how to fix it."""
    if len(data) > MAX_RESULTS_BYTES:
        raise RagsecError(f"'{name}' is larger than 50 MB: load the results.json a bench wrote, not a raw cache")
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise RagsecError(f"'{name}' is not UTF-8 text: load the results.json a `ragsec bench` command wrote") from None
    except json.JSONDecodeError as exc:
        raise RagsecError(f"'{name}' is not valid JSON ({exc.msg} at line {exc.lineno}): "
                          "load the results.json a `ragsec bench` command wrote") from None
    if not isinstance(obj, dict):
        raise RagsecError(f"'{name}' holds a JSON {type(obj).__name__}, not an object: it is not a bench results file")
    return obj


def detect_kind(results: dict[str, Any]) -> str:
    """Which bench wrote the file, from the keys only that bench writes."""
    cfg = _dict(results.get("config"))
    if cfg.get("bench") == "traceback" or ("outcomes" in results and ("char_f1" in results or "methods" in results)):
        return "traceback"
    if "by_alpha_k" in results or ("trials" in results and "reference" in results):
        return "chameleon"
    if "auc" in results and ("by_n" in results or "ablations" in results or "detector" in results):
        return "dscan"
    raise RagsecError("not a results file of `ragsec bench traceback`, `bench dscan` or `bench chameleon` "
                      "(none of their keys: outcomes/char_f1, auc/by_n, by_alpha_k): pick the JSON the bench wrote "
                      "with --out")


def list_results(folder: Path) -> list[Path]:
    """Bench JSONs in a folder (the raw `.raw.jsonl` caches are not results)."""
    return sorted(p for p in folder.glob("*.json") if p.is_file()) if folder.is_dir() else []


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _dict(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _curve(r: Any) -> dict[str, list[float]] | None:
    """`{fpr, tpr}` as equal-length lists of numbers, or None for anything else."""
    if not isinstance(r, dict) or not isinstance(r.get("fpr"), list) or not isinstance(r.get("tpr"), list):
        return None
    fpr, tpr = [_num(x) for x in r["fpr"]], [_num(x) for x in r["tpr"]]
    if len(fpr) != len(tpr) or not fpr or None in fpr or None in tpr:
        return None
    return {"fpr": cast(list[float], fpr), "tpr": cast(list[float], tpr)}  # no None in either: checked above


# ---------------------------------------------------------------- traceback

def attack_label(results: dict[str, Any], fallback: str) -> str:
    """Short name of the attack setting a traceback run used (data set, mode, form, poisons per query)."""
    cfg = _dict(results.get("config"))
    parts = [Path(str(cfg["data"])).stem if cfg.get("data") else fallback]
    for key, fmt in (("mode", "{}"), ("attack_form", "{}"), ("poisons_per_query", "P={}")):
        if cfg.get(key) is not None:
            parts.append(fmt.format(cfg[key]))
    return " ".join(parts)


def traceback_points(results: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """One point per method: `methods` (dict name -> summary, or list of {method|name, ...}) when present,
    else the file's own top-level summary as the single method "ragcharacter" (Pass-1, the name the bench gives it).
    Each point also carries the method's Char F1 on the events the planted text caused (the gold replay's
    `caused` summary; None in files written before it)."""
    attack = attack_label(results, name)
    caused = _dict(_dict(results.get("caused")).get("methods"))
    methods = results.get("methods")
    items: list[tuple[str, Any]]
    if isinstance(methods, dict):
        items = list(methods.items())
    elif isinstance(methods, list):
        items = [(str(m.get("method") or m.get("name") or f"method {i + 1}"), m) for i, m in enumerate(methods)
                 if isinstance(m, dict)]
    else:
        items = [("ragcharacter", results)]
    points = []
    for method, summary in items:
        if not isinstance(summary, dict):
            continue
        f1, fpr = _num(summary.get("char_f1")), _num(summary.get("char_fpr"))
        if f1 is None or fpr is None:
            continue
        c = _dict(caused.get(method))
        points.append({"method": str(method), "attack": attack, "char_f1": f1, "char_fpr": fpr,
                       "events": summary.get("events"), "caused_events": c.get("events"),
                       "char_f1_caused": _num(c.get("char_f1")), "source": name})
    return points


def points_table(points: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for `st.dataframe`: names from the file with invisible characters made visible."""
    return [{**p, **{k: escape_controls(str(p[k])) for k in ("method", "attack", "source") if k in p}} for p in points]


def outcome_counts(results: dict[str, Any]) -> dict[str, int]:
    out = results.get("outcomes")
    if not isinstance(out, dict):
        return {}
    return {str(k): int(v) for k, v in out.items() if isinstance(v, int) and not isinstance(v, bool)}


# ---------------------------------------------------------------- D-SCAN

def dscan_roc(results: dict[str, Any]) -> dict[str, list[float]] | None:
    """The ROC curve when the file carries one (`roc: {fpr, tpr}`), else None: older D-SCAN results
    store AUCs only, and the page then shows the AUC comparison instead of a curve."""
    return _curve(results.get("roc"))


def dscan_aucs(results: dict[str, Any]) -> dict[str, float]:
    """Named AUCs: the detector, its ablations, the zero-shot baseline and the paper's Table 1."""
    out: dict[str, float] = {}
    if _num(results.get("auc")) is not None:
        out["D-SCAN (this run)"] = float(results["auc"])
    for pair, res in _dict(results.get("by_control")).items():  # a --train-controls run: every pair
        if isinstance(res, dict) and _num(res.get("auc")) is not None:
            out[f"D-SCAN, {pair} pairs"] = float(res["auc"])
    head = str(results.get("headline_pair") or "")
    for name, res in _dict(results.get("ablations")).items():
        # one AUC per ablation, or (--train-controls) one per pair: the run's headline pair is plotted
        value = _num(_dict(res).get("auc")) if "auc" in _dict(res) else _num(_dict(res).get(head))
        if value is not None:
            out[f"ablation: {name}"] = float(value)
    zs = results.get("zero_shot")
    if isinstance(zs, dict) and _num(zs.get("auc")) is not None:
        out["zero-shot baseline"] = float(zs["auc"])
    for ds, res in _dict(_dict(results.get("paper")).get("table1_dscan")).items():
        if isinstance(res, dict) and _num(res.get("auc")) is not None:
            out[f"paper (8B): {ds}"] = float(res["auc"])
    return out


# ---------------------------------------------------------------- Chameleon

def chameleon_lines(results: dict[str, Any], metric: str = "co_retrieval") -> dict[int, dict[str, list[float]]]:
    """Per k: alpha (ascending), rate and 95 % interval of `metric` from `by_alpha_k`."""
    by = results.get("by_alpha_k")
    if not isinstance(by, dict):
        return {}
    rows: dict[int, list[tuple[float, float, float, float]]] = {}
    for key, val in by.items():
        try:
            parts = dict(p.split("=", 1) for p in str(key).split(","))
            a, k = float(parts["alpha"]), int(parts["k"])
            m = val[metric]
            lo, hi = (float(x) for x in m.get("ci95", [m["rate"], m["rate"]]))
            rows.setdefault(k, []).append((a, float(m["rate"]), lo, hi))
        except (KeyError, ValueError, TypeError, AttributeError):
            continue
    return {k: {"alpha": [r[0] for r in sorted(v)], "rate": [r[1] for r in sorted(v)],
                "lo": [r[2] for r in sorted(v)], "hi": [r[3] for r in sorted(v)]} for k, v in sorted(rows.items())}


def chameleon_detector_rocs(results: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """`detectors` section: per configuration, per detector: ROC points and AUC."""
    det = results.get("detectors")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if not isinstance(det, dict):
        return out
    for cfg, per in det.items():
        if not isinstance(per, dict):
            continue
        for name, val in per.items():
            curve = _curve(val.get("roc")) if isinstance(val, dict) else None
            if curve:
                out.setdefault(cfg, {})[name] = {**curve, "auc": _num(val.get("auc"))}
    return out


def small_chameleon_run(
    retriever: Any,
    scenarios: Sequence[Any],
    iterations: int = 3,
    on_progress: Callable[[float, str], None] | None = None,
    seed: int = 42,
) -> dict[str, Any]:
    """A few Chameleon trials in-process (one per scenario, gradient, no fluency filter) with the bench's
    result keys, so the page plots it exactly like a file from `ragsec bench chameleon`."""
    if not scenarios:
        raise RagsecError("pick at least one scenario")
    encoder, trials = Encoder(retriever.embedder), []
    for i, sc in enumerate(scenarios):
        if on_progress:
            on_progress(i / len(scenarios), f"trial {i + 1}/{len(scenarios)}: {sc.name}")
        pair = build_pair(sc, encoder, retriever.embeddings, method="gradient", iterations=iterations, seed=seed)
        ev = evaluate_retrieval(inject(retriever, pair.sleeper.text, pair.trigger.text), sc)
        trials.append({"scenario": sc.name, "seed": seed, "optimisation": pair.summary(),
                       "sleeper": pair.sleeper.text, "trigger": pair.trigger.text, "retrieval": ev})
    if on_progress:
        on_progress(1.0, "done")
    return {"config": {"bench": "chameleon", "mode": "app mini run", "n_chunks": len(retriever.chunks),
                       "scenarios": [s.name for s in scenarios], "iterations": iterations, "method": "gradient",
                       "ppl_cap": None, "alphas": list(ALPHAS), "ks": list(KS), "seed": seed, "n_trials": len(trials)},
            "reference": {}, "trials": trials, "by_alpha_k": aggregate([t["retrieval"] for t in trials])}
