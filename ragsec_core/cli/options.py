"""Flags shared by several commands, added in one place so that a new backend or index adds its flag once
and every command that takes a corpus, a model or a store gets it.

Choices come from the core's option lists (light modules: building the parser imports no torch), and
each helper's checks run before any model is loaded, so a typo fails in milliseconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ragsec_core._util.errors import RagsecError
from ragsec_core.models.options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_QUANTIZE,
    ENDPOINT_MODES,
    QUANTIZE_CHOICES,
)

if TYPE_CHECKING:
    from ragsec_core.data.trace import Trace, TraceStore
    from ragsec_core.models.endpoint import EndpointConfig

CORPUS_HELP = "sample corpus name, folder, .jsonl, .csv or attack .json"


def add_corpus_args(p: argparse.ArgumentParser, *, help: str = CORPUS_HELP, variant: bool = True,
                    repeat: bool = False) -> None:
    """`--corpus` (repeatable where a command merges corpora) and, for sample corpora, `--variant`."""
    p.add_argument("--corpus", action="append" if repeat else "store", default=None, help=help)
    if variant:
        p.add_argument("--variant", default=None, help="poisoned variant of a sample corpus (e.g. false_facts)")


def add_retrieval_args(p: argparse.ArgumentParser, *, alpha: float = 0.5, k: int = 5, use: bool = False) -> None:
    """Hybrid weight and depth; `--use` where the command places hits in a prompt; the dense index."""
    p.add_argument("--alpha", type=float, default=alpha, help="hybrid weight of dense scores, in [0, 1]")
    p.add_argument("--k", type=int, default=k, help="number of retrieved chunks")
    if use:
        p.add_argument("--use", type=int, default=None, help="chunks placed in the prompt (default: k)")
    add_index_args(p)


def add_index_args(p: argparse.ArgumentParser) -> None:
    """`--index`: the dense side in a Chroma collection instead of ragsec's in-process index (read-only
    unless `--index-build`)."""
    p.add_argument("--index", default=None, metavar="URL",
                   help="Chroma collection as the dense side: chroma://HOST:PORT/COLLECTION (chroma+https:// for TLS; "
                        "token in CHROMA_AUTH_TOKEN) or chroma:PATH/COLLECTION (default: in-process index)")
    p.add_argument("--index-build", action="store_true",
                   help="embed the corpus and upsert it into --index first (only into a collection ragsec created)")


def add_model_args(p: argparse.ArgumentParser, *, max_new_tokens: bool = True) -> None:
    """The generator: a local model folder or GGUF, its quantisation, and the answer length."""
    p.add_argument("--model", default=None, help="local HF model folder or .gguf file (default: SmolLM2)")
    p.add_argument("--quantize", default=DEFAULT_QUANTIZE, choices=QUANTIZE_CHOICES)
    if max_new_tokens:
        p.add_argument("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS)
    add_endpoint_args(p)


def add_endpoint_args(p: argparse.ArgumentParser) -> None:
    """An OpenAI-compatible endpoint instead of the local model (the black-box path). The key is read from
    the environment variable named by `--api-key-env`, never from a flag value."""
    g = p.add_argument_group("endpoint (a model behind an OpenAI-compatible API)")
    g.add_argument("--endpoint", default=None, metavar="URL", help="base URL, e.g. http://127.0.0.1:8080/v1")
    g.add_argument("--endpoint-model", default=None, metavar="NAME", help="model name the server serves")
    g.add_argument("--endpoint-mode", default=None, choices=ENDPOINT_MODES,
                   help="chat: /chat/completions with messages (default); completions: the rendered prompt (base models)")
    g.add_argument("--api-key-env", default=None, metavar="VAR", help=f"variable holding the API key (default {DEFAULT_API_KEY_ENV})")
    g.add_argument("--api-key-header", default=None, metavar="NAME",
                   help="header carrying the key (default Authorization: Bearer KEY; e.g. api-key for Azure OpenAI)")
    g.add_argument("--endpoint-timeout", type=float, default=60.0, metavar="S", help="seconds per request")
    g.add_argument("--endpoint-retries", type=int, default=2, metavar="N", help="retries on 429/5xx/timeouts")
    g.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'", help="extra header (repeatable)")
    g.add_argument("--ca-bundle", default=None, metavar="FILE", help="CA bundle for a company gateway's TLS")
    g.add_argument("--concurrency", type=int, default=1, metavar="N", help="Pass-1 requests in flight together")


def add_store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=None, help="trace store JSONL (default: user data folder)")


def check_retrieval_args(args: argparse.Namespace) -> None:
    """alpha / k / use, checked once at the CLI boundary (the core trusts them afterwards)."""
    from ragsec_core._util.inputs import check_params

    check_params(args.k, args.alpha)
    use = getattr(args, "use", None)
    if use is not None and use < 1:
        raise RagsecError(f"--use must be >= 1 (got {use})")
    check_index_args(args)


def check_index_args(args: argparse.Namespace) -> None:
    """A malformed `--index` (or `--index-build` without one) fails before anything loads."""
    from ragsec_core.retrieval.chroma import check_flags

    check_flags(getattr(args, "index", None), getattr(args, "index_build", False))


def check_model_args(args: argparse.Namespace) -> None:
    """The model path exists and the answer length is positive, before anything loads."""
    max_new = getattr(args, "max_new_tokens", None)
    if max_new is not None and max_new < 1:
        raise RagsecError(f"--max-new-tokens must be >= 1 (got {max_new})")
    if args.model and not Path(args.model).expanduser().exists():
        raise RagsecError(f"model path not found: '{args.model}'")
    endpoint_config(args)  # a malformed URL, header or setting fails before anything loads


def endpoint_config(args: argparse.Namespace, trace: Trace | None = None) -> EndpointConfig | None:
    """The endpoint from the flags; for a trace made on one, its recorded endpoint with the flags on top
    (so `ragsec trace ID` replays where the incident happened). None: the local model."""
    from ragsec_core.models.endpoint import config_from_flags

    if args.model:  # a local model named explicitly replays locally (an endpoint trace on a surrogate)
        if getattr(args, "endpoint", None):
            raise RagsecError("--model and --endpoint exclude each other: one generator per run")
        return None
    recorded = trace.model if trace is not None else None
    return config_from_flags(args, recorded)


def open_store(args: argparse.Namespace) -> TraceStore:
    """The trace store named by `--store`, else the user data folder's."""
    from ragsec_core._util.paths import default_trace_store
    from ragsec_core.data.trace import TraceStore

    return TraceStore(Path(args.store) if args.store else default_trace_store())
