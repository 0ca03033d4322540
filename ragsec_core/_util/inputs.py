"""Validation of user-supplied parameters and size limits, kept free of heavy imports so the CLI
rejects bad input in milliseconds instead of after loading torch and the models.

The limits bound what one analyst's request can cost (memory, embedding time) and keep hostile inputs
(a 100 MB "corpus", millions of one-word documents) from hanging the app for every session.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from ragsec_core._util.errors import RagsecError

MAX_QUERY_CHARS = 2000
MAX_UPLOAD_BYTES = 32 * 2**20  # one uploaded corpus file in the app
MAX_CORPUS_BYTES = 256 * 2**20  # one corpus file read from disk (CLI, sample folders)
MAX_DOCUMENTS = 200_000
MAX_DOC_CHARS = 2_000_000  # a 1 MB single-line document is fine; chunking splits it
UPLOAD_SUFFIXES = (".jsonl", ".csv", ".json")


def check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise RagsecError("the query is empty: type a question")
    if len(query) > MAX_QUERY_CHARS:
        raise RagsecError(f"the query is too long ({len(query)} characters; at most {MAX_QUERY_CHARS})")
    if "\x00" in query:
        raise RagsecError("the query contains a NUL character")
    # Undecodable argv bytes arrive as lone surrogates; they would break every UTF-8 writer downstream.
    return re.sub("[\ud800-\udfff]", "\ufffd", query.strip())


def check_params(k: object, alpha: object) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise RagsecError(f"k must be an integer >= 1 (got {k})")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= float(alpha) <= 1.0:
        raise RagsecError(f"alpha must be within [0, 1] (got {alpha})")


def check_upload(name: object, size: object) -> str:
    """A safe local file name for an uploaded corpus, or a clear error (type, size, name).

    The browser supplies the name, so it is reduced to its last path component and plain characters:
    an upload can never write outside the scratch folder it is saved in."""
    if not isinstance(size, int) or size < 0:
        raise RagsecError("the upload has no size")
    if size == 0:
        raise RagsecError("the uploaded file is empty")
    if size > MAX_UPLOAD_BYTES:
        raise RagsecError(f"the upload is {size / 2**20:.1f} MiB; at most {MAX_UPLOAD_BYTES // 2**20} MiB")
    base = PurePath(str(name).replace("\\", "/")).name if isinstance(name, str) else ""
    suffix = PurePath(base).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise RagsecError(f"upload a {', '.join(UPLOAD_SUFFIXES)} file (got '{suffix or base or '?'}')")
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", PurePath(base).stem).strip("._")[:80] or "upload"
    return stem + suffix
