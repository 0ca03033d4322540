"""Small scoring primitives the baselines share: token losses, yes/no judgements, short generations.

Each call increments `ctx.calls` once, so calls per event are comparable with Pass-1's replay count, and
adds the tokens it pushed through the model to `ctx.tokens` (forward-pass equivalents).
"""

from __future__ import annotations

import torch

from ragsec_core.models import scoring
from ragsec_core.models.endpoint import EndpointLLM
from ragsec_core.models.llm import LLM, GenerationSettings
from ragsec_core.rag import SYSTEM_PROMPT
from ragsec_core.traceback.baselines.base import MethodContext
from ragsec_core.traceback.baselines.prompts import JUDGE_SYSTEM, NO, YES

MAX_TOKENS = 512  # longer texts are scored on their first 512 tokens


def token_nll(ctx: MethodContext, llm: LLM, text: str) -> tuple[list[float], list[tuple[int, int]]]:
    """Per-token NLL of `text` alone and each token's character offsets (`models.scoring.token_nll`, first
    `MAX_TOKENS` tokens), counted in `ctx.calls` only when it ran a forward (texts of two tokens or more)."""
    nll, offsets = scoring.token_nll(llm, text, MAX_TOKENS)
    if len(nll):
        ctx.calls += 1
        ctx.tokens += len(nll) + 1
    return nll.tolist(), offsets


def continuation_nll(ctx: MethodContext, llm: LLM, prefix: str, target: str) -> float:
    """Mean NLL of `target`'s tokens after an already rendered `prefix` (one forward)."""
    p = llm.encode(prefix)[0][-MAX_TOKENS:]
    t = llm.tokenizer(target, add_special_tokens=False, return_tensors="pt")["input_ids"][0][:64].to(p.device)
    if len(t) == 0:
        return 0.0
    x = torch.cat([p, t])[None, :]
    with llm._lock, torch.no_grad():
        logits = llm.model(x).logits[0, len(p) - 1 : -1].float()
    ctx.calls += 1
    ctx.tokens += x.shape[1]
    return float(-torch.log_softmax(logits, -1)[torch.arange(len(t)), t].mean())


def judge_yes(ctx: MethodContext, user: str) -> tuple[bool, float]:
    """The judge's preference for "Yes" over "No" as its first reply word; returns (yes, margin)."""
    llm = ctx.judge
    ids = llm.encode(llm.render_chat(JUDGE_SYSTEM, user))
    with llm._lock, torch.no_grad():
        logp = torch.log_softmax(llm.model(ids).logits[0, -1].float(), -1)
    ctx.calls += 1
    ctx.tokens += ids.shape[1]
    tok = llm.tokenizer
    yes = max(float(logp[tok.encode(w, add_special_tokens=False)[0]]) for w in (YES, " " + YES))
    no = max(float(logp[tok.encode(w, add_special_tokens=False)[0]]) for w in (NO, " " + NO))
    return yes > no, yes - no


def generate(ctx: MethodContext, llm: LLM | EndpointLLM, prompt: str, max_new_tokens: int = 32) -> str:
    """A short greedy answer; on a chat endpoint `prompt` is the user message, sent beside the RAG system
    prompt as Pass-0 sends it."""
    ctx.calls += 1
    settings = GenerationSettings(max_new_tokens=max_new_tokens)
    if isinstance(llm, EndpointLLM):
        gen = llm.generate(prompt, settings, llm.frame(SYSTEM_PROMPT, prompt))
    else:
        gen = llm.generate(prompt, settings)
    ctx.tokens += gen.prompt_tokens + gen.new_tokens
    return gen.text


def ask_judge(ctx: MethodContext, user: str, max_new_tokens: int = 48) -> str:
    return generate(ctx, ctx.judge, ctx.judge.render_chat(JUDGE_SYSTEM, user), max_new_tokens)
