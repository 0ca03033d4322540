"""Real-browser harness for the Streamlit app: serve `app.py` on a free port, drive headless Chromium,
and log every request the page makes.

The app shows attacker-written text by design, so its first security properties (no script runs, no
request leaves the analyst's machine) can only be checked in a real browser engine. Reusable by any
end-to-end test:

    log = RequestLog()
    with serve_app(tmp_path, {"RAGSEC_SAMPLE_DIR": str(samples)}) as url, browser_page(log) as page:
        page.goto(url)
        ...
        assert not log.external()

Chromium comes from the system (/usr/bin/chromium, or $RAGSEC_CHROMIUM); no browser is downloaded.
Tests skip, not fail, where neither Playwright nor a Chromium binary is installed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
INERT_SCHEMES = {"data", "blob", "about"}  # stay inside the page, reach no host


def chromium_path() -> str | None:
    found = os.environ.get("RAGSEC_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return found if found and Path(found).exists() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RequestLog:
    """Every request the page (and its frames) started, in order, including blocked ones."""

    entries: list[dict[str, str]] = field(default_factory=list)

    def record(self, request: Any) -> None:
        self.entries.append({"url": request.url, "method": request.method, "type": request.resource_type})

    def urls(self) -> list[str]:
        return [e["url"] for e in self.entries]

    def external(self) -> list[str]:
        """Requests that would leave the analyst's machine (any host but loopback)."""
        out = []
        for url in self.urls():
            u = urlparse(url)
            if u.scheme in INERT_SCHEMES:
                continue
            if u.hostname not in LOCAL_HOSTS:
                out.append(url)
        return out


@contextlib.contextmanager
def serve_app(tmp_path: Path, env: dict[str, str] | None = None, app: str = "app.py", timeout: float = 120) -> Iterator[str]:
    """`streamlit run app` on a free loopback port with RAGSEC_HOME in `tmp_path`; yields its URL.

    The server's own log goes to `tmp_path/streamlit.log`, shown in the failure message if it never
    becomes healthy."""
    port = free_port()
    log_path = tmp_path / "streamlit.log"
    full_env = {**os.environ, "RAGSEC_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1", **(env or {})}
    cmd = [sys.executable, "-m", "streamlit", "run", app, "--server.port", str(port), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, timeout, log_path)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float, log_path: Path) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"streamlit did not become healthy at {url}:\n{log_path.read_text(errors='replace')[-3000:]}")


@contextlib.contextmanager
def browser_page(request_log: RequestLog | None = None, block_external: bool = True) -> Iterator[Any]:
    """A fresh headless Chromium page. Every request is recorded in `request_log` *before* routing; with
    `block_external` a request to a non-loopback host is aborted, so a failing test never reaches out.
    `page.ragsec_errors` collects uncaught page errors."""
    sync_api = pytest.importorskip("playwright.sync_api")
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium binary (set RAGSEC_CHROMIUM)")
    log = request_log if request_log is not None else RequestLog()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(service_workers="block")
            page = context.new_page()
            page.ragsec_errors = []
            page.on("request", log.record)
            page.on("pageerror", lambda exc: page.ragsec_errors.append(str(exc)))
            if block_external:
                context.route("**/*", _local_only)
            yield page
        finally:
            browser.close()


def _local_only(route: Any) -> None:
    u = urlparse(route.request.url)
    if u.scheme in INERT_SCHEMES or u.hostname in LOCAL_HOSTS:
        route.continue_()
    else:
        route.abort("blockedbyclient")


# JavaScript probes shared by browser tests ------------------------------------------------------------

PWNED_PROBE = "() => [window.__pwned, ...Array.from(window.frames, f => { try { return f.__pwned } catch (e) { return null } })]"

# Elements an attacker's markup would have produced if any of it had been rendered as HTML.
INJECTED_MARKUP_PROBE = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const v = a.value || '';
      if ((a.name.startsWith('on') && v.includes('__pwned')) || (/^(src|href)$/.test(a.name) && /attacker\\.example|^javascript:/i.test(v)))
        bad.push(el.tagName + ' ' + a.name + '=' + v.slice(0, 80));
    }
    if (el.tagName === 'SCRIPT' && (el.textContent || '').includes('__pwned')) bad.push('SCRIPT ' + el.textContent.slice(0, 80));
  }
  return bad;
}"""
