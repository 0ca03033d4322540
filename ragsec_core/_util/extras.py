"""Optional dependencies (pyproject's extras): a command that needs one says which extra to install, in
one clear line, instead of failing with an ImportError deep inside a run."""

from __future__ import annotations

from importlib.util import find_spec

from ragsec_core._util.errors import RagsecError


def require(extra: str, what: str, *modules: str) -> None:
    """Raise a RagsecError naming `extra` when any of `modules` is not importable."""
    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        raise RagsecError(f"{what} needs the [{extra}] extra (missing: {', '.join(missing)}): "
                          f"pip install 'ragsec[{extra}]'")
