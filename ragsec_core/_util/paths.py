"""Where ragsec keeps caches (dequantised models, indexes) and the trace store.

`RAGSEC_HOME` relocates the data (trace store); `RAGSEC_CACHE_DIR` relocates the caches, which are
large and slow to rebuild, so tests move the store but keep sharing the cache.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from platformdirs import user_cache_dir, user_data_dir


def cache_dir() -> Path:
    path = Path(os.environ.get("RAGSEC_CACHE_DIR") or user_cache_dir("ragsec")).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    home = os.environ.get("RAGSEC_HOME")
    path = Path(home).expanduser() / "data" if home else Path(user_data_dir("ragsec"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_trace_store() -> Path:
    return data_dir() / "traces.jsonl"


def sample_corpora_dir() -> Path:
    """The shipped sample corpora: package data (`ragsec_core.sample_corpora`, mapped from the checkout's
    top-level `sample_corpora/`), so a wheel install finds them too; `RAGSEC_SAMPLE_DIR` points elsewhere."""
    override = os.environ.get("RAGSEC_SAMPLE_DIR")
    if override:
        return Path(override).expanduser()
    return Path(str(files("ragsec_core.sample_corpora")))


def shared_data_dir() -> Path:
    """Other groups' attack data used by benchmarks and some tests (never shipped, never copied):
    `RAGSEC_SHARED_DATA`, else `../shared/data` beside the checkout. May not exist: callers skip or
    fail with a clear message."""
    override = os.environ.get("RAGSEC_SHARED_DATA")
    if override:
        return Path(override).expanduser()
    return Path(__file__).resolve().parents[3] / "shared" / "data"
