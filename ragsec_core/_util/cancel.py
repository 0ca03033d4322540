"""Cooperative cancellation of long library runs (index builds, optimisers, benchmark loops).

Long loops already report progress through a callback (`progress(done, total)`, `on_step(i)`); a
`CancelToken` turns any such callback into a cancellation point, so a view (a Stop button, Ctrl-C
handler, a timeout) can stop a run between steps without threads being killed mid-write. Whatever a
cancelled run would have persisted is written atomically at its end, so nothing partial is left.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ragsec_core._util.errors import RagsecError


class Cancelled(RagsecError):
    """The run was cancelled on request; views show it like any other user-facing message."""


class CancelToken:
    """A thread-safe flag checked at each progress step of a long run."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled("the run was cancelled")

    def wrap(self, inner: Callable[..., Any] | None = None) -> Callable[..., None]:
        """A progress/step callback that raises `Cancelled` once the token is set, else calls `inner`."""

        def step(*args: Any) -> None:
            self.check()
            if inner is not None:
                inner(*args)

        return step
