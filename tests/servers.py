"""Real servers that tests start on a free loopback port and stop afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from importlib.util import find_spec
from pathlib import Path

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


class ChromaServer:
    """`chroma run` on a free loopback port with its own folder; `stop` kills it (the tests of a dying server)."""

    def __init__(self, path: Path) -> None:
        if CHROMA is None:
            pytest.skip("the chroma command is not installed ([scale] extra)")
        self.port = free_port()
        self.log = (path / "chroma.log").open("w")
        self.proc = subprocess.Popen([CHROMA, "run", "--path", str(path / "db"), "--host", "127.0.0.1", "--port", str(self.port)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        if _answers(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", self.proc, 60):
            return
        self.stop()
        pytest.fail(f"chroma run did not start: {(path / 'chroma.log').read_text()[-500:]}")

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
        self.port = free_port()
        self.model = alias
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_dir / f"llama-{alias}.log"
        self.log = self.log_path.open("w")
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias, "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", str(n_ctx), "--n_threads", "1", "--n_threads_batch", "1"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        if _answers(f"{self.base_url}/models", self.proc, 120):
            return
        self.stop()
        pytest.fail(f"llama_cpp.server did not start: {self.log_path.read_text()[-800:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.log.close()
