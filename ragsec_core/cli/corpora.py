"""`ragsec corpora [--json]` (every corpus with its counts) and `ragsec corpora build tech` (the technical
documentation corpus: rendered, chunked, embedded and indexed once, resumable)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from ragsec_core.cli.display import visible


def add_corpora_parser(sub: argparse._SubParsersAction) -> None:
    from ragsec_core.data.corpus import BUILT_CORPORA

    p = sub.add_parser("corpora", help="list every corpus with its counts, or build a large one (`build tech`)")
    p.add_argument("action", nargs="?", choices=("list", "build"), default="list")
    p.add_argument("name", nargs="?", choices=tuple(BUILT_CORPORA), help="the corpus to build")
    p.add_argument("--json", action="store_true", help="list as JSON: name, documents, passages, ...")
    p.add_argument("--max-passages", type=int, default=None, help="build: stop adding pages after this many passages")
    p.add_argument("--no-index", action="store_true", help="build: render and chunk only (no embedding)")
    p.set_defaults(func=cmd_corpora)


def cmd_corpora(args: argparse.Namespace) -> int:
    from ragsec_core._util.errors import RagsecError

    if args.action == "build":
        if args.name is None:
            raise RagsecError("say which corpus to build: ragsec corpora build tech")
        if args.max_passages is not None and args.max_passages < 1:
            raise RagsecError(f"--max-passages must be >= 1 (got {args.max_passages})")
        return _build(args)
    rows = corpus_rows()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        counts = f"{r['documents']} documents, {r['passages']} passages" if r["documents"] is not None else "not built"
        variants = ", ".join(visible(v) for v in r.get("variants", [])) or "-"
        print(f"{visible(r['name'])}: {counts}; variants {variants}" + (f" (build: {r['build']})" if r.get("build") else ""))
    return 0


def corpus_rows() -> list[dict[str, Any]]:
    """Sample corpora (counted by chunking them, ~200 passages each) and built corpora (their manifest)."""
    from ragsec_core.data.corpus import (
        BUILT_CORPORA,
        built_corpus_dir,
        chunk_corpus,
        load_corpus,
        sample_corpus_names,
        variant_names,
    )
    from ragsec_core.data.techdocs import read_manifest

    rows: list[dict[str, Any]] = []
    for name in sample_corpus_names():
        corpus = load_corpus(name)
        rows.append({"name": name, "kind": "sample", "documents": len(corpus.documents),
                     "passages": len(chunk_corpus(corpus)), "variants": variant_names(name)})
    for name, how in BUILT_CORPORA.items():
        m = read_manifest(built_corpus_dir(name))
        rows.append({"name": name, "kind": "built", "documents": m["documents"] if m else None,
                     "passages": m["passages"] if m else None, "variants": [], "path": str(built_corpus_dir(name)),
                     "sources": m["sources"] if m else None, "build": None if m else how})
    return rows


def _build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.data.techdocs import build_tech_corpus

    pages = tqdm(desc="rendering pages", unit="page", file=sys.stderr)

    def rendered(source: str, passages: int) -> None:
        pages.set_postfix_str(f"{source}, {passages} passages", refresh=False)
        pages.update()

    manifest = build_tech_corpus(max_passages=args.max_passages, progress=rendered)
    pages.close()
    per_source = ", ".join(f"{k} {v['passages']}" for k, v in manifest["sources"].items())
    print(f"{manifest['name']}: {manifest['documents']} documents, {manifest['passages']} passages ({per_source})")
    if args.no_index:
        return 0
    from ragsec_core.rag import build_retriever
    from ragsec_core.retrieval.embed import Embedder

    corpus = load_corpus(manifest["name"])
    progress, close = progress_bar("embedding passages", "passage")
    retriever = build_retriever(corpus, Embedder(), progress=progress)
    close()
    print(f"index: {len(retriever.chunks)} passages ({retriever.index_info()['kind']}), cached")
    return 0


def progress_bar(desc: str, unit: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A (done, total) callback drawing one tqdm bar, reset when a next phase starts over; and its close."""
    from tqdm import tqdm

    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
        elif done < bar.n:
            bar.reset(total)
        bar.update(done - bar.n)

    def close() -> None:
        if bar is not None:
            bar.close()

    return progress, close
