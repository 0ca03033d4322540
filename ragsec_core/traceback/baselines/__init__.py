"""Traceback baselines of RAGCharacter §5.1 (PPL, RAGForensics, RAGOrigin, RobustRAG and the -Char
hybrids) and our Pass-1, all behind one interface: `get(name).run(trace, ctx) -> MethodResult`.

The registry maps each method name to the class that implements it, as a `module:Class` path resolved
on first use, so listing the methods (argparse `choices`, the app's select boxes) imports no model code.
A new method is one module here plus one line in `METHODS`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ragsec_core._util.errors import RagsecError

if TYPE_CHECKING:
    from ragsec_core.traceback.baselines.base import Method, MethodContext, MethodResult
    from ragsec_core.traceback.baselines.ppl import calibrate

METHODS: dict[str, str] = {
    "ragcharacter": "ragcharacter:RAGCharacter",
    "ppl": "ppl:PPL",
    "ragforensics": "ragforensics:RAGForensics",
    "ragorigin": "ragorigin:RAGOrigin",
    "robustrag": "robustrag:RobustRAG",
    "ppl-char": "ppl_char:PPLChar",
    "ragforensics-char": "evidence:RAGForensicsChar",
    "ragorigin-char": "evidence:RAGOriginChar",
    "contextcite": "contextcite:ContextCite",
    "tracllm": "tracllm:TracLLM",
}

# How each method runs when the victim sits behind an endpoint (black-box): on the endpoint itself
# (`black-box`: it only sends prompts and reads answers), with a local model as its judge, proxy or scorer
# (`surrogate`: the default local model stands in, as the method's paper allows), or not at all
# (`local-only`: it needs the victim's own log-probabilities or KV replay).
ACCESS: dict[str, str] = {
    "ragcharacter": "black-box",
    "ppl": "surrogate",  # passage perplexity: PPL needs passage log-probabilities, so a local model scores them
    "ragforensics": "surrogate",  # the LM judge runs locally
    "ragorigin": "black-box + surrogate",  # victim generations on the endpoint, the proxy LM locally
    "robustrag": "black-box",
    "ppl-char": "local-only",  # replays on the victim with prefix KV reuse
    "ragforensics-char": "black-box + surrogate",
    "ragorigin-char": "black-box + surrogate",
    "contextcite": "local-only",  # Lasso over the victim's own answer log-probabilities under source ablations
    "tracllm": "local-only",  # Shapley/LOO over the victim's own answer log-probabilities
}

_LAZY = {"Method": "base", "MethodContext": "base", "MethodResult": "base", "calibrate": "ppl"}

__all__ = ["ACCESS", "METHODS", "check_access", "Method", "MethodContext", "MethodResult", "calibrate", "get", "method_class", "parse_methods"]


def method_class(name: str) -> type:
    """The class registered under `name` (imports its module)."""
    try:
        module, cls = METHODS[name].split(":")
    except KeyError:
        raise RagsecError(f"unknown method '{name}' (choose from {', '.join(METHODS)})") from None
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def get(name: str) -> Method:
    """A fresh instance of the method registered under `name`."""
    return method_class(name)()


def parse_methods(spec: str) -> list[str]:
    """A comma-separated method list, validated and de-duplicated in order (no model code imported)."""
    names = list(dict.fromkeys(n.strip().lower() for n in spec.split(",") if n.strip()))
    if not names:
        raise RagsecError("--methods is empty")
    for n in names:
        if n not in METHODS:
            raise RagsecError(f"unknown method '{n}' (choose from {', '.join(METHODS)})")
    return names


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_access(names: list[str], endpoint: bool) -> dict[str, str]:
    """Each method's access with this victim (all `white-box` on the local model); a method that cannot
    run on an endpoint is one clear error before anything loads."""
    if not endpoint:
        return {n: "white-box" for n in names}
    blocked = [n for n in names if ACCESS[n] == "local-only"]
    if blocked:
        raise RagsecError(f"{', '.join(blocked)} cannot run on an endpoint (it replays the victim with its own "
                          "log-probabilities); drop it from --methods or use the local model")
    return {n: ACCESS[n] for n in names}
