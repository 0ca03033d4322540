"""Validation of user-supplied parameters, kept free of heavy imports so the CLI rejects bad input
in milliseconds instead of after loading torch and the models."""

from __future__ import annotations

from .errors import RagsecError

MAX_QUERY_CHARS = 2000


def check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise RagsecError("the query is empty: type a question")
    if len(query) > MAX_QUERY_CHARS:
        raise RagsecError(f"the query is too long ({len(query)} characters; at most {MAX_QUERY_CHARS})")
    return query.strip()


def check_params(k: object, alpha: object) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise RagsecError(f"k must be an integer >= 1 (got {k})")
    if not isinstance(alpha, (int, float)) or not 0.0 <= float(alpha) <= 1.0:
        raise RagsecError(f"alpha must be within [0, 1] (got {alpha})")
