"""Cooperative cancellation of long library runs (index builds, optimisers, benchmark loops).

Long loops already report progress through a callback (`progress(done, total)`, `on_step(i)`); a
`CancelToken` turns any such callback into a cancellation point, so a view (a Stop button, Ctrl-C
handler, a timeout) can stop a run between steps without threads being killed mid-write. Whatever a
cancelled run would have persisted is written atomically at its end, so nothing partial is left.
"""

from __future__ import annotations

import contextlib
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


class Interrupts:
    """Ctrl-C for a command-line run that must end the same way wherever the signal lands.

    Python's default handler raises `KeyboardInterrupt` at the next bytecode, which a library may swallow
    or re-raise during interpreter shutdown (seen under load while torch and transformers were loading:
    the run finished and stored its trace, exit 0; or the process died by the signal after the message,
    exit -2). This handler also records the request, so the command can refuse to commit its output
    (`check`) and the entry point can end the process at once with 130 (`exit_now`). A second Ctrl-C
    while the first is being handled ends the process immediately."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._previous: Any = None

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise `KeyboardInterrupt` if Ctrl-C was pressed: call before committing a result."""
        if self._event.is_set():
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: Any) -> None:
        if self._event.is_set():
            self.exit_now()
        self._event.set()
        raise KeyboardInterrupt

    def install(self) -> None:
        """Take SIGINT over (main thread only; elsewhere, e.g. inside a test runner's worker, a no-op)."""
        import signal

        if threading.current_thread() is threading.main_thread():
            self._event.clear()
            self._previous = signal.signal(signal.SIGINT, self._handle)

    def uninstall(self) -> None:
        import signal

        if self._previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    @staticmethod
    def exit_now(code: int = 130) -> None:
        """End the process now: flush the streams, skip interpreter shutdown (where a late
        `KeyboardInterrupt` from a library thread join turns the exit code into -2)."""
        import os
        import sys

        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


INTERRUPTS = Interrupts()  # the process's one SIGINT state (the CLI installs it)
