"""Real servers that tests start on a free loopback port and stop afterwards."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path
from typing import IO

import pytest

from .browser import free_port

CHROMA = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")


def _answers(url: str, proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Poll `url` until the server started as `proc` answers (True), exits or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return True
        except OSError:
            if proc.poll() is not None:
                return False
            time.sleep(0.3)
    return False


def held_by(pid: int, port: int) -> bool:
    """Whether the process `pid` or one of its children listens on `port`, not merely someone: a port drawn
    free can be taken by another process before the server binds it, and that process may answer too. True
    where psutil (the [bench] extra) is not installed to tell."""
    try:
        import psutil
    except ImportError:
        return True
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.Error:
        return False
    for proc in family:
        with contextlib.suppress(psutil.Error):
            if any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in proc.net_connections("tcp")):
                return True
    return False


def _serve(argv: Callable[[int], list[str]], url: Callable[[int], str], log_path: Path, seconds: float,
           env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], int, IO[str]] | None:
    """(process, port, log) of a server started on a free port once it answers `url(port)` and holds the port
    itself (`held_by`), or None. A port free when drawn can be taken before the server binds it (by the
    other test worker's server, say): the server then exits saying so, or another process answers, and it
    is started again on a new port (3 tries)."""
    for _ in range(3):
        port, log = free_port(), log_path.open("w")
        proc = subprocess.Popen(argv(port), stdout=log, stderr=subprocess.STDOUT, env=env)
        answered = _answers(url(port), proc, seconds)
        if answered and held_by(proc.pid, port):
            return proc, port, log
        taken = answered or "address already in use" in log_path.read_text().lower()  # another process answered, or held it
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        log.close()
        if not taken:
            return None
    return None


class ChromaServer:
    """`chroma run` on a free loopback port with its own folder; `stop` kills it (the tests of a dying server)."""

    def __init__(self, path: Path) -> None:
        if CHROMA is None:
            pytest.skip("the chroma command is not installed ([scale] extra)")
        started = _serve(lambda port: [CHROMA, "run", "--path", str(path / "db"), "--host", "127.0.0.1", "--port", str(port)],
                         lambda port: f"http://127.0.0.1:{port}/api/v2/heartbeat", path / "chroma.log", 60)
        if started is None:
            pytest.fail(f"chroma run did not start: {(path / 'chroma.log').read_text()[-500:]}")
        self.proc, self.port, self.log = started

    def url(self, collection: str) -> str:
        return f"chroma://127.0.0.1:{self.port}/{collection}"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.log.close()


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) serving a GGUF on a free
    loopback port; `stop` kills it (the tests of a server that dies mid-run). One thread: the two cores are
    shared with the test process's own model."""

    def __init__(self, gguf: Path, log_dir: Path, alias: str = "smollm2", n_ctx: int = 4096) -> None:
        if find_spec("llama_cpp") is None or find_spec("uvicorn") is None:
            pytest.skip("llama-cpp-python[server] is not installed ([endpoint] extra)")
        self.model = alias
        self.log_path = log_dir / f"llama-{alias}.log"
        started = _serve(lambda port: [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias,
                                       "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1",
                                       "--n_threads_batch", "1"],
                         lambda port: f"http://127.0.0.1:{port}/v1/models", self.log_path, 120,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
        if started is None:
            pytest.fail(f"llama_cpp.server did not start: {self.log_path.read_text()[-800:]}")
        self.proc, self.port, self.log = started
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.log.close()
