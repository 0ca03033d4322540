"""Reading user-supplied files that may be hostile: size-capped, UTF-8 or a clear error, never a crash.

Corpus files, attack data and scenario files all come from outside, so every reader funnels through
here and turns each failure (too big, binary, wrong encoding, invalid or too deeply nested JSON,
unusable path) into one `RagsecError` a person can act on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import MAX_CORPUS_BYTES


def read_text(path: Path) -> str:
    """UTF-8 (BOM tolerated) or a clear error; NUL bytes mean a binary file, not a corpus."""
    try:
        size = path.stat().st_size
        if size > MAX_CORPUS_BYTES:
            raise RagsecError(f"'{path}' is {size / 2**20:.1f} MiB; corpus files may be at most {MAX_CORPUS_BYTES // 2**20} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise RagsecError(f"cannot read '{path}': {exc.strerror or exc}") from None
    return decode_utf8(data, str(path), "a text corpus")


def decode_utf8(data: bytes, name: str, kind: str) -> str:
    """The bytes of a hostile file as UTF-8 text (BOM tolerated), or one clear error naming `name` and
    what it should have been (`kind`): UTF-16, NUL bytes (a binary file) or invalid UTF-8."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") and b"\x00" in data:
        raise RagsecError(f"'{name}' is UTF-16: re-encode it as UTF-8")
    if b"\x00" in data:
        raise RagsecError(f"'{name}' looks like a binary file (NUL bytes), not {kind}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RagsecError(f"'{name}' is not valid UTF-8 (byte {exc.start}): re-encode it as UTF-8") from None


def read_json(path: str | Path, what: str = "file") -> Any:
    """A user-supplied JSON file, or one clear `RagsecError` (missing, not UTF-8, binary, invalid JSON)."""
    p = Path(path).expanduser()
    if not exists(p, kind="file"):
        raise RagsecError(f"{what} not found: '{p}'")
    return parse_json(read_text(p), f"'{p}'")


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str, what: str, *, strict: bool = False) -> Any:
    """JSON text from outside, or one clear `RagsecError` naming `what`. `strict` also refuses NaN and
    Infinity, which would make a record that embeds the values invalid JSON for other readers."""
    try:
        return json.loads(text, parse_constant=_no_constants) if strict else json.loads(text)
    except json.JSONDecodeError as exc:
        raise RagsecError(f"{what}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # only the strict constants hook raises a bare ValueError
        raise RagsecError(f"{what}: {exc}") from None
    except RecursionError:
        raise RagsecError(f"{what}: JSON nested too deeply") from None


def exists(p: Path, kind: str = "any") -> bool:
    """`Path.exists` / `is_dir` / `is_file` (kind any/dir/file) treating unusable names (too long,
    NUL byte) as absent instead of raising."""
    try:
        return p.is_dir() if kind == "dir" else p.is_file() if kind == "file" else p.exists()
    except (OSError, ValueError):
        return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (one character for one: offsets unchanged)."""
    return _SURROGATE.sub("\ufffd", text)
