"""Real servers that tests start on a free loopback port and stop afterwards."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .browser import free_port

CHROMA = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")


class ChromaServer:
    """`chroma run` on a free loopback port with its own folder; `stop` kills it (the tests of a dying server)."""

    def __init__(self, path: Path) -> None:
        if CHROMA is None:
            pytest.skip("the chroma command is not installed ([scale] extra)")
        self.port = free_port()
        self.log = (path / "chroma.log").open("w")
        self.proc = subprocess.Popen([CHROMA, "run", "--path", str(path / "db"), "--host", "127.0.0.1", "--port", str(self.port)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=2).read()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.3)
        self.stop()
        pytest.fail(f"chroma run did not start: {(path / 'chroma.log').read_text()[-500:]}")

    def url(self, collection: str) -> str:
        return f"chroma://127.0.0.1:{self.port}/{collection}"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.log.close()
