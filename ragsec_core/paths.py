"""Where ragsec keeps caches (dequantised models, indexes) and the trace store.

`RAGSEC_HOME` relocates the data (trace store); `RAGSEC_CACHE_DIR` relocates the caches, which are
large and slow to rebuild, so tests move the store but keep sharing the cache.
"""

from __future__ import annotations

import os
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
