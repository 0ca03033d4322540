"""A generator behind an OpenAI-compatible HTTP API (OpenAI, vLLM, llama.cpp's server, Ollama, a gateway).

RAGCharacter is black-box by design: Pass-1 only needs to send a (masked) prompt and read the answer, so a
deployed model that ragsec cannot load is investigated through the same endpoint that served the incident.
Two request shapes: `chat` sends messages to `/chat/completions` (the prompt ragsec masks is the content of
one message, the others are sent verbatim); `completions` sends the rendered prompt text to `/completions`
(base models, and servers whose chat template must be bypassed).

Everything the server returns is untrusted input: a status that is not 2xx after the retries, a timeout, a
body that is not an OpenAI-shaped completion, or a dead connection is one `RagsecError` that names the
endpoint (never its key). The key is read from an environment variable only, sent in a header, and scrubbed
from every message this module writes.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.urls import is_secret_param
from ragsec_core.models.llm import Generation, GenerationSettings
from ragsec_core.models.options import DEFAULT_API_KEY_ENV, ENDPOINT_MODES

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})  # transient: retried with backoff
MAX_BODY_BYTES = 8 << 20  # an answer of a few words never needs more; a bigger body is garbage


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to reach the model. The API key is not a field: only the variable's name is kept."""

    base_url: str
    model: str
    mode: str = "chat"
    api_key_env: str = DEFAULT_API_KEY_ENV
    timeout_s: float = 60.0
    retries: int = 2  # extra attempts after a transient failure (429, 5xx, connection reset, timeout)
    backoff_s: float = 0.5  # doubled after each failed attempt
    headers: dict[str, str] = field(default_factory=dict)  # gateway headers (not recorded in traces; never credentials)
    ca_bundle: str | None = None  # a company CA for TLS interception proxies
    concurrency: int = 1  # requests in flight together where Pass-1's candidates are independent
    api_key_header: str = "Authorization"  # sent as `Bearer KEY`; any other name carries the bare key (Azure: api-key)

    def __post_init__(self) -> None:
        if self.mode not in ENDPOINT_MODES:
            raise RagsecError(f"endpoint mode must be one of {', '.join(ENDPOINT_MODES)} (got '{self.mode}')")
        if not self.model.strip():
            raise RagsecError("--endpoint-model is empty: give the model name the server serves")
        if self.timeout_s <= 0 or self.retries < 0 or self.concurrency < 1:
            raise RagsecError("endpoint timeout must be > 0, retries >= 0 and concurrency >= 1")
        if self.ca_bundle is not None and not os.path.isfile(self.ca_bundle):
            raise RagsecError(f"CA bundle not found: '{self.ca_bundle}'")
        for name in self.headers:
            if is_secret_param(name):
                raise RagsecError(f"header '{name}' looks like a credential: "
                                  "put the key in an environment variable (--api-key-env)")
        object.__setattr__(self, "base_url", check_url(self.base_url))

    def describe(self) -> dict[str, Any]:
        """What a trace records about the endpoint: enough to replay on it, nothing secret."""
        return {"url": self.base_url, "model": self.model, "mode": self.mode, "api_key_env": self.api_key_env,
                "api_key_header": self.api_key_header}


def check_url(url: str) -> str:
    """The base URL, normalised to end in `/v1` when given as a bare host; credentials are refused.

    Refused, not stripped: a URL with `user:pass@` or `?api-key=` would put the secret in shell history,
    the trace and every report, and a stripped URL would fail to authenticate anyway."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RagsecError("--endpoint: expected an http(s) URL such as http://127.0.0.1:8080/v1")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise RagsecError("--endpoint: credentials or parameters in the URL are refused; put the API key in an "
                          "environment variable and name it with --api-key-env")
    try:
        parts.port  # noqa: B018 - validates the port
    except ValueError:
        raise RagsecError("--endpoint: the port is not a number") from None
    path = parts.path.rstrip("/")
    if path == "":
        path = "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def config_from_flags(flags: Any, recorded: dict[str, Any] | None = None) -> EndpointConfig | None:
    """The endpoint named by the `--endpoint*` flags (attributes of an argparse namespace, as the CLI and
    the bench commands carry them), on top of a trace's recorded `model` when it was made on an endpoint.
    None when neither names one: the local model."""
    made = (recorded.get("endpoint") or {}) if recorded and recorded.get("backend") == "endpoint" else {}
    url = getattr(flags, "endpoint", None) or made.get("url")
    name = getattr(flags, "endpoint_model", None) or made.get("model")
    if not url and not name:
        return None
    if not url or not name:
        raise RagsecError("--endpoint and --endpoint-model go together (the server's URL and its model name)")
    mode = getattr(flags, "endpoint_mode", None) or made.get("mode") or ENDPOINT_MODES[0]
    if made.get("mode") and mode != made["mode"]:
        raise RagsecError(f"the trace was made in {made['mode']} mode; its prompt cannot be replayed in {mode} mode")
    return EndpointConfig(
        url, name, mode, getattr(flags, "api_key_env", None) or made.get("api_key_env") or DEFAULT_API_KEY_ENV,
        timeout_s=getattr(flags, "endpoint_timeout", 60.0), retries=getattr(flags, "endpoint_retries", 2),
        headers=parse_headers(getattr(flags, "header", None) or []), ca_bundle=getattr(flags, "ca_bundle", None),
        concurrency=getattr(flags, "concurrency", 1),
        api_key_header=getattr(flags, "api_key_header", None) or made.get("api_key_header") or "Authorization",
    )


def parse_headers(values: Sequence[str]) -> dict[str, str]:
    """`NAME: VALUE` strings as a header dict."""
    out = {}
    for v in values:
        name, sep, value = v.partition(":")
        if not sep or not name.strip():
            raise RagsecError("--header: expected 'NAME: VALUE'")
        out[name.strip()] = value.strip()
    return out


@dataclass
class Usage:
    """What the endpoint cost so far: the cost panel and the artifact report it."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    retries: int = 0

    def since(self, earlier: Usage) -> Usage:
        """What was spent after `earlier` (a copy taken then): one run's cost on a shared client."""
        return Usage(self.requests - earlier.requests, self.prompt_tokens - earlier.prompt_tokens,
                     self.completion_tokens - earlier.completion_tokens, self.seconds - earlier.seconds,
                     self.retries - earlier.retries)

    def to_dict(self) -> dict[str, float]:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "seconds": round(self.seconds, 3), "retries": self.retries}


class EndpointLLM:
    """The generator interface of `LLM` (render_chat, generate, model_id) over HTTP. No tokenizer and no
    weights: analyses that need them (D-SCAN, PPL) run on a local surrogate instead."""

    backend = "endpoint"
    quantize = "none"

    def __init__(self, config: EndpointConfig, api_key: str | None = None) -> None:
        """`api_key`: a key given by the app's password field for one browser session; otherwise the
        environment variable the config names."""
        self.config = config
        self.model_id = f"{config.model} @ {config.base_url}"
        self.usage = Usage()
        self._lock = threading.Lock()
        self._key = api_key.strip() if api_key and api_key.strip() else self._read_key()
        headers = {"Content-Type": "application/json", **config.headers}
        if self._key:
            name = config.api_key_header
            headers[name] = f"Bearer {self._key}" if name.lower() == "authorization" else self._key
        verify: Any = config.ca_bundle if config.ca_bundle else True
        self._client = httpx.Client(headers=headers, timeout=config.timeout_s, verify=verify,
                                    limits=httpx.Limits(max_connections=max(4, config.concurrency)))

    def _read_key(self) -> str | None:
        """The key from the named variable; a missing variable is fine for local servers without auth,
        unless the user named a variable explicitly."""
        key = os.environ.get(self.config.api_key_env, "").strip()
        if not key and self.config.api_key_env != DEFAULT_API_KEY_ENV:
            raise RagsecError(f"--api-key-env: environment variable {self.config.api_key_env} is not set")
        return key or None

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "endpoint": self.config.describe()}

    def close(self) -> None:
        self._client.close()

    # ------------------------------------------------------------ prompt shapes
    def render_chat(self, system: str, user: str) -> str:
        """The text ragsec masks. In chat mode it is the user message itself (the system message travels
        beside it, verbatim); in completions mode it is the whole rendered prompt."""
        if self.config.mode == "chat":
            return user
        return f"{system}\n\n{user}"

    def frame(self, system: str, prompt: str) -> list[dict[str, str]] | None:
        """The chat messages a request whose user message is `prompt` is sent (the system message beside
        it); None in completions mode, where `prompt` is the whole text sent."""
        if self.config.mode != "chat":
            return None
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]

    # ------------------------------------------------------------ requests
    def generate(self, prompt: str, settings: GenerationSettings | None = None,
                 messages: Sequence[dict[str, str]] | None = None) -> Generation:
        """One greedy completion (temperature 0, the settings' seed). In chat mode `messages` are sent
        (default: `prompt` as the only user message); in completions mode `prompt` is sent as is."""
        s = settings or GenerationSettings()
        body: dict[str, Any] = {"model": self.config.model, "max_tokens": s.max_new_tokens,
                                "temperature": s.temperature if s.do_sample else 0.0, "seed": s.seed}
        if self.config.mode == "chat":
            body["messages"] = list(messages) if messages else [{"role": "user", "content": prompt}]
            path = "/chat/completions"
        else:
            body |= {"prompt": prompt, "stop": ["\n"]}  # a base model continues past its short answer
            path = "/completions"
        t0 = time.perf_counter()
        data = self._post(path, body)
        text, prompt_tokens, new_tokens = self._parse(data)
        ms = (time.perf_counter() - t0) * 1000
        with self._lock:
            self.usage.prompt_tokens += prompt_tokens
            self.usage.completion_tokens += new_tokens
            self.usage.seconds += ms / 1000
        return Generation(text.strip(), prompt_tokens, new_tokens, ms)

    def generate_many(self, jobs: Sequence[tuple[str, Sequence[dict[str, str]] | None]],
                      settings: GenerationSettings | None = None) -> list[Generation]:
        """Several independent generations, `concurrency` in flight together, results in input order."""
        if self.config.concurrency <= 1 or len(jobs) <= 1:
            return [self.generate(p, settings, m) for p, m in jobs]
        with ThreadPoolExecutor(self.config.concurrency) as pool:
            return list(pool.map(lambda job: self.generate(job[0], settings, job[1]), jobs))

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        """POST with bounded retries on transient failures; anything else is one clear error."""
        url, delay, last = self.config.base_url + path, self.config.backoff_s, "no attempt"
        for attempt in range(self.config.retries + 1):
            if attempt:
                with self._lock:
                    self.usage.retries += 1
                time.sleep(delay)
                delay *= 2
            with self._lock:
                self.usage.requests += 1
            try:
                resp = self._client.post(url, content=json.dumps(body, ensure_ascii=False).encode("utf-8"))
            except httpx.TimeoutException:
                last = f"no answer within {self.config.timeout_s:g} s"
                continue
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {self._scrub(' '.join(str(exc).split())[:200])}"
                continue
            if resp.status_code in RETRY_STATUS:
                last = f"HTTP {resp.status_code}"
                continue
            if not resp.is_success:
                raise self._error(f"HTTP {resp.status_code} {self._detail(resp)}")
            if len(resp.content) > MAX_BODY_BYTES:
                raise self._error(f"answered {len(resp.content)} bytes, more than a completion can be")
            try:
                return resp.json()
            except ValueError:
                raise self._error("answered a body that is not JSON") from None
        raise self._error(f"failed after {self.config.retries + 1} attempts ({last})")

    def _parse(self, data: Any) -> tuple[str, int, int]:
        """(text, prompt tokens, completion tokens) of an OpenAI-shaped response, or one clear error."""
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] if self.config.mode == "chat" else choice["text"]
        except (KeyError, IndexError, TypeError):
            raise self._error("answered JSON that is not an OpenAI-compatible completion (no choices[0] text)") from None
        if text is None:
            text = ""  # a chat answer of only a refusal or a tool call carries no content
        if not isinstance(text, str):
            raise self._error("answered a completion whose text is not a string")
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return text, _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))

    def _detail(self, resp: Any) -> str:
        """A short, scrubbed, single-line excerpt of an error body (servers put the reason there)."""
        return self._scrub(" ".join(resp.text.split())[:200])

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _error(self, what: str) -> RagsecError:
        return RagsecError(self._scrub(f"endpoint {self.config.base_url} ({self.config.model}) {what}"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
