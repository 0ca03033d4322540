"""Benchmark items fanned out as Ray tasks on actors that load the models once each (`--ray`).

A benchmark splits into a driver, which makes every seeded choice, writes the one results file and shows
the one progress bar, and a work function `work(state, item) -> result` that needs only its item and a
state built once per process by `setup(*setup_args)` (the models, the clean index). `serial_map` runs the
work in the driver's process on a state it was given; `ray_map` starts one actor per `threads` CPUs of
the cluster, each building its own state. Both yield `(index, result)` in item order, so a benchmark has
one consuming loop and the same results file either way (timings aside).

Fault tolerance is Ray's own: an actor whose process dies is restarted (fresh process, state built again)
and the task it was running is retried once on it (`max_task_retries=1`); an item whose retry dies too is
yielded as `Failed` with Ray's error, and the benchmark writes it into its results. An exception raised
by the work itself is raised on the driver, as in a serial run. `ray` is imported only here, inside the
functions: a serial run and `ragsec --help` never load it.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.extras import require
from ragsec_core.retrieval.chroma import check_flags

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 5.0  # a TCP check first: Ray itself waits minutes on an address where nothing listens
ENV_PREFIXES = ("RAGSEC_", "HF_", "TRANSFORMERS_")  # where models, caches and data are: the actors see the driver's


@dataclass(frozen=True)
class Failed:
    """An item that gave no result: the actor running it died, and died again on the retry."""

    error: str


def pin_threads(threads: int | None) -> None:
    """Torch CPU threads for this process (`None`: torch's default), set before any model runs: a serial
    run and every actor compute with the same thread count, so their floating-point sums agree."""
    if threads is not None and threads < 1:
        raise RagsecError(f"--threads must be >= 1 (got {threads})")
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def shippable(args: argparse.Namespace) -> argparse.Namespace:
    """The flags without the command's function (a closure of the CLI), to send to actors. `--index-build`
    is the driver's alone: it builds the collection once, and the actors only read it."""
    return argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "func"} | {"index_build": False})


def check_index(args: argparse.Namespace) -> None:
    """Before anything loads: a malformed `--index` fails, and with `--ray` the collection must be served
    (`chroma://`), because an embedded Chroma folder cannot be opened by several processes at once."""
    loc = check_flags(getattr(args, "index", None), getattr(args, "index_build", False))
    if loc is not None and loc.path is not None and getattr(args, "ray", None):
        raise RagsecError("--ray needs a served collection (--index chroma://HOST:PORT/COLLECTION): an embedded "
                          "Chroma folder cannot be opened by several processes; serve it with `chroma run --path`")


def _always() -> bool:
    return True


def serial_map(
    state: S, work: Callable[[S, T], R], items: Sequence[T], keep_going: Callable[[], bool] = _always
) -> Iterator[tuple[int, R]]:
    """`work(state, item)` for each item in this process, in order; `keep_going` is asked before each."""
    for i, item in enumerate(items):
        if not keep_going():
            return
        yield i, work(state, item)


@contextmanager
def connected(address: str | None) -> Iterator[None]:
    """Connected to the Ray cluster at `address` ("auto" or host:port) for the block; `None`: no Ray."""
    if address is None:
        yield
        return
    connect(address)
    import ray

    try:
        yield
    finally:
        ray.shutdown()


def connect(address: str) -> None:
    """`ray.init(address=...)`, with one clear RagsecError when the extra is missing or no cluster answers."""
    require("scale", "--ray", "ray")
    import ray

    if address != "auto":
        _check_reachable(address)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RagsecError(f"--ray {address}: cannot connect to a Ray cluster ({exc}); start one with "
                          "`ray start --head` or pass its address host:port") from None


def _check_reachable(address: str) -> None:
    """Fail in seconds when nothing listens at a host:port (or ray://host:port) address."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RagsecError(f"--ray takes 'auto' or a Ray cluster address host:port (got '{address}')")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise RagsecError(f"--ray {address}: no Ray cluster answers there ({exc.strerror or exc}); start one with "
                          "`ray start --head` or pass its address host:port") from None


class _Actor(Generic[S, T, R]):
    """One Ray actor: pins its threads, builds its state on first use (again after a restart, so a
    retried item runs on a fresh state), then runs the work on item after item. The setup arguments come
    with every call as a reference into the object store (in a list, so Ray does not resolve it), fetched
    only when the state is built: a restarted actor needs no constructor arguments kept alive by Ray."""

    def __init__(self, setup: Callable[..., S], work: Callable[[S, T], R], threads: int) -> None:
        pin_threads(threads)
        self._setup, self._work = setup, work
        self._state: list[S] = []  # empty until built

    def ready(self, setup_args: list[Any]) -> None:
        """Build the state now (models loaded before the first item is handed out)."""
        import ray

        if not self._state:
            self._state.append(self._setup(*ray.get(setup_args[0])))

    def run(self, setup_args: list[Any], item: T) -> R:
        self.ready(setup_args)
        return self._work(self._state[0], item)


def ray_map(
    setup: Callable[..., S],
    setup_args: tuple[Any, ...],
    work: Callable[[S, T], R],
    items: Sequence[T],
    *,
    threads: int,
    keep_going: Callable[[], bool] = _always,
) -> Iterator[tuple[int, R | Failed]]:
    """`work(state, item)` for each item on actors of the connected cluster, yielded in item order as they
    finish (a finished item waits only for those before it). Each actor has `threads` CPUs and one item
    at a time; `keep_going` is asked before each item is handed out (items handed out still finish)."""
    import ray

    if not items:
        return
    n = min(len(items), actor_slots(threads))
    env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)} | {"OMP_NUM_THREADS": str(threads)}
    remote: Any = ray.remote(num_cpus=threads, max_restarts=-1, max_task_retries=1, runtime_env={"env_vars": env})(_Actor)
    setup_ref = [ray.put(setup_args)]  # one copy for every actor, alive while this driver runs the map
    actors = [remote.remote(setup, work, threads) for _ in range(n)]
    try:
        for started in [a.ready.remote(setup_ref) for a in actors]:
            if isinstance(lost := _result(started), Failed):
                raise RagsecError(f"a Ray actor could not start: {lost.error}")
        yield from _in_order(actors, setup_ref, items, keep_going)
    finally:
        for a in actors:
            ray.kill(a)


def actor_slots(threads: int) -> int:
    """How many actors of `threads` CPUs the live nodes hold (an actor runs on one node)."""
    import ray

    cpus = [int(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]
    if not cpus or threads > max(cpus):
        raise RagsecError(f"--threads {threads}: no node of the Ray cluster has that many CPUs (nodes: {cpus or 'none'})")
    return sum(c // threads for c in cpus)


def _in_order(
    actors: list[Any], setup_ref: list[Any], items: Sequence[T], keep_going: Callable[[], bool]
) -> Iterator[tuple[int, Any]]:
    """Hand items to idle actors, wait for any to finish, yield results in item order."""
    import ray

    idle = list(actors)
    running: dict[Any, tuple[int, Any]] = {}  # task -> (item, actor)
    finished: dict[int, Any] = {}  # results waiting for an earlier item
    handed = yielded = 0
    while True:
        while idle and handed < len(items) and keep_going():
            actor = idle.pop()
            running[actor.run.remote(setup_ref, items[handed])] = (handed, actor)
            handed += 1
        if not running:
            return
        [ref], _ = ray.wait(list(running), num_returns=1)
        i, actor = running.pop(ref)
        idle.append(actor)
        finished[i] = _result(ref)
        while yielded in finished:
            yield yielded, finished.pop(yielded)
            yielded += 1


def _result(ref: Any) -> Any:
    """The task's value; its own exception raised as itself; a lost task (its actor died twice, its node
    went away, memory ran out) as `Failed`."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    try:
        return ray.get(ref)
    except RayTaskError as exc:
        cause = exc.cause
        raise (cause if isinstance(cause, Exception) else RagsecError(str(exc))) from None
    except RayError as exc:
        return Failed(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
