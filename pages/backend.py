"""The sidebar's generator picker: the local model, or a model behind an OpenAI-compatible endpoint.

The endpoint client is per browser session (kept in `st.session_state`, never in `st.cache_resource`, whose
cache every session shares): a key typed here is a password field that lives only in this session and is
sent only to the endpoint it was typed for. Without a typed key, the client reads `OPENAI_API_KEY` on the
server running the app, as the CLI does.
"""

from __future__ import annotations

import streamlit as st

from pages.common import get_llm, show_error
from ragsec_core._util.errors import RagsecError
from ragsec_core.data.trace import Trace
from ragsec_core.models.endpoint import EndpointConfig, EndpointLLM
from ragsec_core.models.llm import LLM
from ragsec_core.models.options import BACKENDS, DEFAULT_BACKEND, ENDPOINT_MODES
from ragsec_core.rag import Pipeline

WIDGETS = ("backend", "ep_url", "ep_model", "ep_mode", "ep_key")
LABELS = {"local": "Local model (SmolLM2, white-box)", "endpoint": "OpenAI-compatible endpoint (black-box)"}


def backend_sidebar() -> None:
    """The picker's widgets. Their values are mirrored into plain session keys and restored from there,
    because Streamlit drops a widget's state on a run that does not draw it (a page handing over to the
    router), and the choice must survive going from Investigate to Traceback."""
    saved: dict[str, str] = st.session_state.setdefault("_generator", {})
    for key, value in saved.items():
        if key not in st.session_state:
            st.session_state[key] = value
    with st.sidebar:
        st.subheader("Generator")
        backend = st.radio("Backend", BACKENDS, index=BACKENDS.index(DEFAULT_BACKEND), format_func=LABELS.__getitem__,
                           key="backend")
        if backend == "endpoint":
            st.text_input("Endpoint URL", key="ep_url", max_chars=500, placeholder="http://127.0.0.1:8080/v1")
            st.text_input("Model name", key="ep_model", max_chars=200, placeholder="smollm2")
            st.selectbox("Request shape", ENDPOINT_MODES, key="ep_mode",
                         help="chat: /chat/completions with messages; completions: the rendered prompt (base models)")
            st.text_input("API key (this browser session only)", key="ep_key", type="password", max_chars=500,
                          help="Empty: OPENAI_API_KEY on the server running the app, if set.")
            st.caption("Attention (D-SCAN) runs on the local model as a surrogate.")
    saved.update({k: st.session_state[k] for k in WIDGETS if k in st.session_state})


def session_generator() -> LLM | EndpointLLM:
    """The generator this session picked; an endpoint whose settings are incomplete or malformed is one
    `st.error` and stops the page."""
    if st.session_state.get("backend", DEFAULT_BACKEND) != "endpoint":
        return get_llm()
    try:
        config = EndpointConfig(st.session_state.get("ep_url", "").strip(), st.session_state.get("ep_model", "").strip(),
                                st.session_state.get("ep_mode", ENDPOINT_MODES[0]))
    except RagsecError as exc:
        show_error(exc, "Fix the endpoint in the sidebar, or pick the local model")
        st.stop()
    key = st.session_state.get("ep_key", "") or None
    held = st.session_state.get("_ep_client")
    if held is None or held[0] != (config, key):
        held = ((config, key), EndpointLLM(config, api_key=key))
        st.session_state["_ep_client"] = held
    client: EndpointLLM = held[1]
    return client


def generator_for(trace: Trace) -> LLM | EndpointLLM:
    """The generator a trace replays on: an endpoint trace needs the endpoint picked in the sidebar (its
    prompt is one chat message, which the local model would read without its template)."""
    made_on = trace.model.get("backend", "local")
    if made_on != "endpoint":
        return get_llm()
    gen = session_generator()
    if not isinstance(gen, EndpointLLM):
        raise RagsecError("this trace was made on an endpoint: pick the endpoint in the sidebar to replay it there")
    return gen


def with_generator(pipeline: Pipeline) -> Pipeline:
    """The cached pipeline's corpus and index with this session's generator (a light wrapper: nothing reloads)."""
    gen = session_generator()
    return pipeline if gen is pipeline.llm else Pipeline(pipeline.corpus, pipeline.retriever, gen)
