"""Crash-safe file writes: temp file in the same folder, fsync, rename.

A reader therefore sees either the old file or the new one, never a torn record, even when the
writer is killed mid-write. Appends rewrite the file the same way under an advisory lock so two
writers never interleave lines.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

ORPHAN_AGE_S = 3600  # a temp file this old belongs to a killed writer, never to a live one


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_orphans(path, ORPHAN_AGE_S)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_text_atomic(path: str | Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Exclusive advisory lock on `path + '.lock'` for read-modify-write cycles."""
    lock_path = Path(str(path) + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def append_line_atomic(path: str | Path, line: str) -> None:
    """Append one line (no newline inside) by rewriting the file atomically under a lock."""
    if "\n" in line:
        raise ValueError("a JSONL record must not contain a newline")
    path = Path(path)
    with locked(path):
        remove_orphans(path)  # every appender holds this lock while writing, so any temp is an orphan
        old = path.read_bytes() if path.exists() else b""
        if old and not old.endswith(b"\n"):
            old += b"\n"
        write_bytes_atomic(path, old + line.encode("utf-8") + b"\n")


def remove_orphans(path: Path, older_than_s: float = 0.0) -> int:
    """Delete temp files a killed writer left beside `path` (each can be as large as the file itself).
    Readers never look at them, so this is housekeeping, not recovery. Returns how many went."""
    import time

    gone = 0
    now = time.time()
    for tmp in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime >= older_than_s:
                tmp.unlink()
                gone += 1
    return gone


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
