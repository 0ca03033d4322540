"""Which shipped demo scenarios make a good guided demo? For every sample query that names its attack:
ask over the poisoned variant, and where the model adopts the false fact run Pass-1 and the remediation loop.

    .venv/bin/python bench/guided_scenarios.py [--out bench/out/guided.jsonl]

Prints one JSON line per scenario and a summary (adopted / resolved / restored).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    from tqdm import tqdm

    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.models.llm import load_llm
    from ragsec_core.rag import Pipeline, build_retriever
    from ragsec_core.retrieval.embed import Embedder
    from ragsec_core.traceback.ragcharacter import run_pass1
    from ragsec_core.traceback.remediate import remediate
    from ragsec_core.views.guided import scenarios

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--out", default=None, help="also write the JSON lines here")
    args = ap.parse_args()
    embedder, llm, cache = Embedder(), load_llm(), {}

    def pipe(corpus: str, variant: str) -> Pipeline:
        if (corpus, variant) not in cache:
            c = load_corpus(corpus, variant)
            cache[(corpus, variant)] = Pipeline(c, build_retriever(c, embedder), llm)
        return cache[(corpus, variant)]

    rows = []
    for sc in tqdm(scenarios(), desc="scenarios", file=sys.stderr):
        t0 = time.perf_counter()
        p = pipe(sc.corpus, sc.variant)
        tr = p.ask(sc.query.query, k=args.k, alpha=args.alpha)
        row = {"corpus": sc.corpus, "id": sc.query.id, "variant": sc.variant, "adopted": bool(tr.signals.t_asr), "answer": tr.answer}
        if tr.signals.t_asr:
            p1 = run_pass1(llm, tr)
            row.update(resolved=p1.resolved, attribution=[s.text for s in p1.attribution])
            if p1.attribution:
                fix = remediate(p, tr, p1.attribution)
                row.update(after=fix.after.answer, restored=fix.restored)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        from ragsec_core._util.atomic import write_text_atomic

        write_text_atomic(args.out, "".join(json.dumps(r) + "\n" for r in rows))
    adopted = [r for r in rows if r["adopted"]]
    print(f"scenarios {len(rows)}  adopted {len(adopted)}  resolved {sum(bool(r.get('resolved')) for r in adopted)}  "
          f"restored {sum(bool(r.get('restored')) for r in adopted)}", file=sys.stderr)


if __name__ == "__main__":
    main()
