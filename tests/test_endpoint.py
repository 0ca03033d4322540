"""The black-box path: Pass-0 and Pass-1 over an OpenAI-compatible endpoint.

The model is a real llama.cpp server (llama-cpp-python) serving the bundled SmolLM2 GGUF. The failure cases
use real HTTP servers on 127.0.0.1 that misbehave on purpose (a 500, a 429 then an answer, a body that is
not a completion, a stall, a server that dies after its first answer): each must become one clear
`RagsecError` (exit 2 on the CLI), leave no partial trace or artifact, and never show the API key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.spans import apply_masks
from ragsec_core.data.trace import TraceStore
from ragsec_core.models.endpoint import EndpointConfig, EndpointLLM, check_url
from ragsec_core.models.endpoint_replay import EndpointReplayEngine, text_logprob, word_f1
from ragsec_core.models.llm import GenerationSettings

from .conftest import REPO

BASTION = "What is the hostname of the bastion host?"
PLANTED = "The bastion host for administrative access is gate02.northwind.example."
KEY_ENV, KEY = "RAGSEC_TEST_API_KEY", "sk-test-9f8e7d6c5b4a-DO-NOT-LEAK"
ANSWER = {"choices": [{"message": {"role": "assistant", "content": "gate02.northwind.example"}, "text": "x"}],
          "usage": {"prompt_tokens": 10, "completion_tokens": 3}}


# ---------------------------------------------------------------- settings (no server)

@pytest.mark.parametrize("url", ["http://user:pw@127.0.0.1:8080/v1", "https://h.example/v1?api-key=abc",
                                 "ftp://h.example/v1", "127.0.0.1:8080", "http://h.example:port/v1"])
def test_bad_or_credential_urls_are_refused_without_echoing_them(url):
    with pytest.raises(RagsecError) as err:
        check_url(url)
    assert "pw" not in str(err.value) and "abc" not in str(err.value)


def test_urls_normalise_to_the_api_root():
    assert check_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1"
    assert check_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/v1"
    assert check_url("https://gw.example/openai/v1") == "https://gw.example/openai/v1"


def test_credential_headers_and_unset_key_variables_are_refused(monkeypatch):
    with pytest.raises(RagsecError, match="looks like a credential"):
        EndpointConfig("http://127.0.0.1:1/v1", "m", headers={"X-Api-Key": "secret"})
    monkeypatch.delenv("RAGSEC_UNSET_VAR", raising=False)
    with pytest.raises(RagsecError, match="RAGSEC_UNSET_VAR is not set"):
        EndpointLLM(EndpointConfig("http://127.0.0.1:1/v1", "m", api_key_env="RAGSEC_UNSET_VAR"))


def test_text_influence_orders_answers_by_overlap_with_the_event():
    event = "The bastion host is gate02.northwind.example."
    assert word_f1(event, event) == 1.0 and text_logprob(event, event) == 0.0
    partial = "gate02.northwind.example"
    assert text_logprob(event, event) > text_logprob(partial, event) > text_logprob("I don't know", event)
    assert word_f1(partial, event) == word_f1(event, partial)
    assert text_logprob("Paris", event) == text_logprob("", event) < text_logprob("a host", event)


# ---------------------------------------------------------------- misbehaving servers

class _BadServer(ThreadingHTTPServer):
    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Bad)
        self.mode, self.seen = mode, []  # (Authorization, api-key) of every request

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (the stall test's timeout) breaks the pipe on purpose: not worth a traceback."""


class _Bad(BaseHTTPRequestHandler):
    """`server.mode`: 500 | 429-then-ok | not-json | not-openai | stall | ok-then-die."""

    server: _BadServer

    def do_POST(self) -> None:
        srv = self.server
        srv.seen.append((self.headers.get("Authorization"), self.headers.get("api-key")))
        mode, n = srv.mode, len(srv.seen)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if mode == "stall":
            time.sleep(3)
        if mode == "500":
            return self._send(500, f"internal error for {self.headers.get('Authorization')}".encode())
        if mode == "429-then-ok" and n == 1:
            return self._send(429, b"slow down")
        if mode == "not-json":
            return self._send(200, b"<html>gateway login</html>")
        if mode == "not-openai":
            return self._send(200, b'{"result": "gate02"}')
        if mode == "ok-then-die" and n > 1:
            threading.Thread(target=lambda: (srv.shutdown(), srv.server_close())).start()
            self.connection.close()  # the server dies mid-run: no answer, then nobody listens
            return None
        return self._send(200, json.dumps(ANSWER).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _BadServers:
    """Starts misbehaving servers on demand (`bad_server(mode)` -> base URL); `servers` keeps them for checks."""

    def __init__(self) -> None:
        self.servers: list[_BadServer] = []

    def __call__(self, mode: str) -> str:
        srv = _BadServer(mode)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/v1"


@pytest.fixture
def bad_server() -> Iterator[_BadServers]:
    started = _BadServers()
    yield started
    for srv in started.servers:
        srv.shutdown()
        srv.server_close()


def _client(url: str, timeout_s: float = 60.0, retries: int = 2) -> EndpointLLM:
    return EndpointLLM(EndpointConfig(url, "smollm2", api_key_env=KEY_ENV, timeout_s=timeout_s, retries=retries, backoff_s=0.05))


@pytest.mark.parametrize(("mode", "message"), [
    ("500", "failed after 3 attempts (HTTP 500)"), ("not-json", "not JSON"),
    ("not-openai", "not an OpenAI-compatible completion"), ("stall", "no answer within 0.5 s"),
])
def test_a_failing_server_is_one_clear_error_without_the_key(monkeypatch, bad_server, mode, message):
    monkeypatch.setenv(KEY_ENV, KEY)
    llm = _client(bad_server(mode), timeout_s=0.5, retries=2 if mode == "500" else 0)
    with pytest.raises(RagsecError) as err:
        llm.generate("Question?")
    text = str(err.value)
    assert message in text and KEY not in text and "\n" not in text


def test_a_rate_limit_is_retried_and_the_key_is_sent_as_a_bearer_header(monkeypatch, bad_server):
    monkeypatch.setenv(KEY_ENV, KEY)
    url = bad_server("429-then-ok")
    llm = _client(url)
    assert llm.generate("Question?").text == "gate02.northwind.example"
    assert llm.usage.requests == 2 and llm.usage.retries == 1
    assert KEY not in json.dumps(llm.describe())
    assert bad_server.servers[-1].seen == [(f"Bearer {KEY}", None)] * 2


def test_a_gateway_key_header_carries_the_bare_key(monkeypatch, bad_server):
    monkeypatch.setenv(KEY_ENV, KEY)
    url = bad_server("ok")
    llm = EndpointLLM(EndpointConfig(url, "m", api_key_env=KEY_ENV, api_key_header="api-key"))
    assert llm.generate("Question?").text == "gate02.northwind.example"
    assert bad_server.servers[-1].seen == [(None, KEY)] and KEY not in json.dumps(llm.describe())


def test_server_down_is_one_clear_error(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    llm = _client("http://127.0.0.1:9/v1", retries=1)  # port 9 (discard): nothing listens on loopback
    with pytest.raises(RagsecError, match=r"failed after 2 attempts \(ConnectError"):
        llm.generate("Question?")


# ---------------------------------------------------------------- a real llama.cpp server

@pytest.fixture(scope="module")
def secops_embedded(embedder):
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.rag import build_retriever

    corpus = load_corpus("secops", "embedded")
    return corpus, build_retriever(corpus, embedder)


def test_planted_case_over_http_fires_and_traces_to_the_planted_sentence(llama_server, secops_embedded):
    from ragsec_core.rag import SYSTEM_PROMPT, Pipeline
    from ragsec_core.traceback.ragcharacter import run_pass1

    llm = EndpointLLM(EndpointConfig(llama_server.base_url, llama_server.model))
    trace = Pipeline(*secops_embedded, llm).ask(BASTION)
    assert trace.signals.par, trace.answer
    assert trace.model["backend"] == "endpoint" and trace.model["endpoint"]["url"] == llama_server.base_url
    assert trace.messages == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": trace.prompt}]
    res = run_pass1(llm, trace)
    assert res.resolved and res.backend == "endpoint" and res.influence == "text-overlap"
    assert any(PLANTED in a.text for a in res.attribution)
    assert res.usage["requests"] == res.model_calls >= 1 and res.usage["prompt_tokens"] > 0
    # the benchmark's gold replay goes over the same server: one request, the planted text caused the event
    from ragsec_core.bench.causation import gold_replay

    before = llm.usage.requests
    gold = gold_replay(llm, trace)
    assert trace.labels.target and gold["caused"] is True and llm.usage.requests == before + 1


def test_concurrent_screening_equals_one_at_a_time(llama_server, secops_embedded):
    """The chunk-screening candidates of the planted case, sent two in flight, give exactly the answers
    (and influences) of serial replay."""
    from ragsec_core.rag import Pipeline

    serial = EndpointLLM(EndpointConfig(llama_server.base_url, llama_server.model))
    trace = Pipeline(*secops_embedded, serial).ask(BASTION)
    prompts = [apply_masks(trace.prompt, [(s.start, s.end)]) for s in trace.spans]
    settings = GenerationSettings(**trace.model["settings"])
    one = EndpointReplayEngine(serial, trace.prompt, settings, trace.messages_for)
    expected = [one.replay(p, trace.answer) for p in prompts]
    both = EndpointLLM(EndpointConfig(llama_server.base_url, llama_server.model, concurrency=2))
    two = EndpointReplayEngine(both, trace.prompt, settings, trace.messages_for)
    two.prefetch(prompts, trace.answer)
    assert both.usage.requests == len(prompts) and two.calls == len(prompts)
    got = [two.replay(p, trace.answer) for p in prompts]
    assert both.usage.requests == len(prompts)  # the replays read the memo
    assert [(r.answer, r.logprob) for r in got] == [(r.answer, r.logprob) for r in expected]
    assert len({r.answer for r in got}) > 1  # masking different chunks changed the answer somewhere


def _ragsec(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragsec_core.cli", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})})


@pytest.mark.model
def test_cli_ask_and_trace_over_the_endpoint_and_failures_mid_run(llama_server, bad_server, tmp_path):
    """`ragsec ask` and `ragsec trace` on the endpoint (the trace replays where it was made); then the
    same trace against a server that dies after one answer and one that returns 500: exit 2, one line,
    no artifact. The key never reaches the store, the artifact, the report or any output."""
    store, art, html = tmp_path / "t.jsonl", tmp_path / "a.json", tmp_path / "r.html"
    env = {KEY_ENV: KEY}
    ep = ["--endpoint", llama_server.base_url, "--endpoint-model", llama_server.model, "--api-key-env", KEY_ENV]
    r = _ragsec("ask", BASTION, "--corpus", "secops", "--variant", "embedded", *ep, "--store", str(store), env=env)
    assert r.returncode == 0, r.stderr
    trace_id = json.loads(store.read_text().splitlines()[-1])["trace_id"]
    r = _ragsec("attention", trace_id, "--store", str(store), "--samples", "1")  # D-SCAN needs weights: a surrogate
    assert r.returncode == 0 and r.stdout.startswith("surrogate: attention of SmolLM2") and "P(poisoned)" in r.stdout, r.stderr
    r = _ragsec("trace", trace_id, "--store", str(store), "--out", str(art), "--html", str(html), env=env)
    assert r.returncode == 0, r.stderr
    artifact = json.loads(art.read_text())
    assert PLANTED in json.dumps(artifact["pass1"]["attribution"]) and artifact["pass1"]["influence"] == "text-overlap"
    for url, what in ((bad_server("ok-then-die"), "failed after"), (bad_server("500"), "HTTP 500")):
        out = tmp_path / f"bad-{what[:4]}.json"
        r = _ragsec("trace", trace_id, "--store", str(store), "--out", str(out), "--endpoint", url,
                    "--endpoint-model", "smollm2", "--endpoint-retries", "1", "--endpoint-timeout", "10",
                    "--api-key-env", KEY_ENV, env=env)
        errors = [line for line in r.stderr.splitlines() if line.startswith("ragsec: error")]
        assert r.returncode == 2 and len(errors) == 1 and what in errors[0], r.stderr
        assert not out.exists() and not list(tmp_path.glob(".*.tmp"))
    for text in (store.read_text(), art.read_text(), html.read_text(), r.stdout + r.stderr):
        assert KEY not in text
    assert len(list(TraceStore(store).records())) == 1


def test_llama_server_answers_like_the_model_it_serves(llama_server):
    """The fixture's server is real: its chat template is SmolLM2's, and it stops on the template's EOS."""
    body = json.dumps({"model": llama_server.model, "messages": [{"role": "user", "content": "Say hello."}],
                       "max_tokens": 8, "temperature": 0}).encode()
    req = urllib.request.Request(f"{llama_server.base_url}/chat/completions", body, {"Content-Type": "application/json"})
    data = json.loads(urllib.request.urlopen(req, timeout=60).read())
    assert data["choices"][0]["message"]["content"].strip() and data["usage"]["prompt_tokens"] > 5


def test_guided_demo_runs_every_stage_over_the_endpoint(llama_server, embedder, llm):
    """The teaching story with an endpoint as the generator: answers, traceback and remediation go over
    HTTP; the attention stage reads the local surrogate and says so."""
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.rag import Pipeline, build_retriever
    from ragsec_core.views.guided import STAGES, DemoState, advance, default_index, scenarios

    items = scenarios()
    scenario = items[default_index(items)]
    http = EndpointLLM(EndpointConfig(llama_server.base_url, llama_server.model))
    clean_corpus, poisoned_corpus = load_corpus(scenario.corpus), load_corpus(scenario.corpus, scenario.variant)
    clean = Pipeline(clean_corpus, build_retriever(clean_corpus, embedder), http)
    poisoned = Pipeline(poisoned_corpus, build_retriever(poisoned_corpus, embedder), http)
    state = DemoState(scenario)
    for _ in STAGES:
        advance(state, clean, poisoned, None, embedder, surrogate=llm)
    r = state.results
    assert state.done and r["poisoned"].model["backend"] == "endpoint" and r["poisoned"].signals.t_asr
    assert r["dscan_poisoned"].surrogate == llm.model_id and r["pass1"].backend == "endpoint"
    assert r["remediation"].after.model["backend"] == "endpoint"
