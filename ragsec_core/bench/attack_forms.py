"""The forms an attack text takes when `ragsec bench traceback` plants it (`--attack-form`).

Every form is built from data we have and tuned to nothing: they exist to measure attribution on attack
shapes other than the GPT-written claims, not to flatter any method. `docs/attack_forms.md` says where
each comes from and how its gold is defined.

* `black`: PoisonedRAG's black-box form, the question then the adversarial text.
* `text`: the adversarial text alone.
* `hotflip`: PoisonedRAG's white-box shape: a prefix S, started from the question's words and optimised
  word by word with HotFlip gradients through MiniLM (the retriever's embedder; the Semantic Chameleon
  optimiser) so that S + claim embeds close to the question, then the claim, which the model must adopt.
* `bait-noise`: the claim, then retrieval bait: the query's keywords and words of the passages the
  retriever ranks top for it, shuffled into non-sentences (keyword-stuffing SEO poison).
* `blind`, `garag`: RAGDefender's artifacts as they are: an LLM-written misleading article (planted like
  the others), or a typo-perturbed copy of the clean passage that replaces it (planting mode `replace`).
* `soup`: an obfuscated token soup: the claim's and the question's content words shuffled, some of them
  obfuscated, the false answer verbatim among them, without sentence structure or punctuation; it checks
  the boundary on a form no rule was written for.
* the held-out forms (`held_out_registry.HELD_OUT`, the machine-made ones in `held_out_machine`, those whose marks run through the claim in `held_out_inline`): shapes
  written after the boundary's rules, each measured once as first built; `options.ATTACK_FORMS` lists them
  after `soup`, in the order they were added.

Seeded forms draw from a generator of their own per (run seed, record id, text): the planting generator
draws the same hosts and boundaries under every form, and a record's text does not depend on --limit or
on the question order.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from ragsec_core._util.text import black_box_text, tokenize
from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.bench.held_out_registry import HELD_OUT
from ragsec_core.chameleon.attack import Encoder, Objective, detokenize, optimise_gradient, query_keywords, words
from ragsec_core.retrieval.hybrid import HybridRetriever

# How much bait the keyword-stuffing form carries: fixed once, not tuned on any result. Each query keyword
# twice, the 12 commonest other words of the 3 passages ranked top for the question, in runs of 4-8 words.
BAIT_REPEATS = 2
BAIT_RELATED = 12
BAIT_PASSAGES = 3
BAIT_RUN = (4, 8)


def text_seed(seed: int, rec_id: str, j: int) -> int:
    """The seed of record `rec_id`'s j-th text: stable across processes (no `hash`), apart from the planting's."""
    return zlib.crc32(f"{seed}|{rec_id}|{j}".encode())


# ---------------------------------------------------------------- hotflip

@dataclass
class QueryObjective(Objective):
    """PoisonedRAG's white-box retrieval condition: the poison S + I embeds close to the question, loss
    1 - cos(E(S + I), E(Q)). The prefix alone would not do: started from the question it is already at
    cos 1, and what is retrieved is the whole text, claim included."""

    q: torch.Tensor  # [d] the question's normalised embedding

    def loss(self, e: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        return 1 - e @ self.q


@dataclass(frozen=True)
class HotflipText:
    text: str  # the optimised prefix, a space, the claim verbatim
    prefix: str
    start_loss: float  # 1 - cos to the question of the question-prefixed start
    final_loss: float


def hotflip_text(question: str, claim: str, encoder: Encoder, seed: int) -> HotflipText:
    """HotFlip over the prefix only: the claim's words are protected, every prefix word may be replaced
    (PoisonedRAG's S is all adversarial tokens), the optimiser's own defaults otherwise (iterations,
    candidates, patience) and no fluency cap (PoisonedRAG's S has none). The claim is appended verbatim
    so that the optimiser's re-spacing of punctuation never touches what the model reads as the claim."""
    start = detokenize(words(question))
    q = encoder.embed([question])[0]
    res = optimise_gradient(f"{start} {claim}", QueryObjective(q), encoder, protected=claim, max_modified=1.0, seed=seed)
    prefix = detokenize(res.words[: len(res.words) - len(words(claim))])
    return HotflipText(f"{prefix} {claim}", prefix, res.initial_loss, res.final_loss)


# ---------------------------------------------------------------- bait-noise

def bait_words(question: str, related: Sequence[str]) -> list[str]:
    """The bag of bait: each query keyword BAIT_REPEATS times, then the BAIT_RELATED commonest alphabetic
    non-stopword words of the related passages that are not query keywords (ties: first seen)."""
    keywords = list(query_keywords(question))
    counts = Counter(t for text in related for t in tokenize(text) if t.isalpha() and len(t) > 2 and t not in keywords)
    return keywords * BAIT_REPEATS + [w for w, _ in counts.most_common(BAIT_RELATED)]


def bait_noise_text(claim: str, question: str, related: Sequence[str], rng: random.Random) -> str:
    """The claim verbatim (less trailing whitespace), then the bait shuffled and cut into runs of BAIT_RUN
    words, each capitalised and closed by a period: non-sentences that a sentence splitter still takes for
    sentences."""
    bag = bait_words(question, related)
    rng.shuffle(bag)
    runs, i = [], 0
    while i < len(bag):
        n = rng.randint(*BAIT_RUN)
        runs.append(" ".join(bag[i : i + n]).capitalize() + ".")
        i += n
    return f"{claim.rstrip()} {' '.join(runs)}" if runs else claim


# ---------------------------------------------------------------- soup

# How the soup is made: fixed once, not tuned on any result. A third of the words obfuscated; the false
# answer stated SOUP_ANSWERS times among the shuffled words.
SOUP_OBFUSCATED = 1 / 3
SOUP_ANSWERS = 2
_LEET = str.maketrans("aeios", "43105")


def obfuscate(word: str, rng: random.Random) -> str:
    """One of three disguises: alternating case, digits for letters, or a stray symbol inside the word."""
    kind = rng.randrange(3)
    if kind == 0:
        return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(word))
    if kind == 1:
        return word.translate(_LEET)
    cut = rng.randint(1, max(1, len(word) - 1))
    return word[:cut] + rng.choice("*_~^") + word[cut:]


def soup_text(claim: str, question: str, answer: str, rng: random.Random) -> str:
    """The claim's and the question's content words, shuffled, a `SOUP_OBFUSCATED` share disguised
    (`obfuscate`), with the false answer verbatim `SOUP_ANSWERS` times among them; lower case, no
    punctuation, no sentences."""
    bag = [w for w in tokenize(f"{claim} {question}") if w.isalpha() and w not in tokenize(answer)]
    bag = [obfuscate(w, rng) if rng.random() < SOUP_OBFUSCATED else w for w in bag]
    bag += [answer] * SOUP_ANSWERS
    rng.shuffle(bag)
    return " ".join(bag)


# ---------------------------------------------------------------- the forms

def form_texts(rec: AttackRecord, form: str, n: int | None = None, *, seed: int = 0,
               encoder: Encoder | None = None, related: Sequence[str] = ()) -> list[str]:
    """The texts to plant for `rec` in `form`, one per adversarial text (the first `n`). `hotflip` needs
    the retriever's `encoder`; `bait-noise` takes its corpus words from the `related` passages."""
    advs = rec.adv_texts[:n]
    if form == "black":
        return [black_box_text(rec.question, a) for a in advs]
    if form in ("text", "blind", "garag"):  # RAGDefender's documents are planted as they are
        return list(advs)
    if form == "hotflip":
        if encoder is None:
            raise ValueError("the hotflip form optimises against the retriever's embedder: pass its Encoder")
        return [hotflip_text(rec.question, a, encoder, text_seed(seed, rec.id, j)).text for j, a in enumerate(advs)]
    rngs = [random.Random(text_seed(seed, rec.id, j)) for j in range(len(advs))]
    if form == "bait-noise":
        return [bait_noise_text(a, rec.question, related, rng) for a, rng in zip(advs, rngs)]
    if form == "soup":
        return [soup_text(a, rec.question, rec.incorrect, rng) for a, rng in zip(advs, rngs)]
    if form in HELD_OUT:
        return [HELD_OUT[form](rec, a, rng) for a, rng in zip(advs, rngs)]
    raise ValueError(f"unknown attack form {form!r}")


def plant_mode(form: str, mode: str) -> str:
    """The planting a form gets under --mode: a GARAG copy belongs in its own clean passage, so `embedded`
    means replacing that passage with it (`standalone` adds the copy beside it); the others as asked."""
    return "replace" if form == "garag" and mode == "embedded" else mode


@dataclass
class FormBuilder:
    """`form_texts` over a run's clean index: the MiniLM encoder for hotflip (built once) and the related
    passages for bait-noise (the clean chunks the retriever ranks top for the question, at the run's alpha)."""

    form: str
    retriever: HybridRetriever
    alpha: float = 0.5
    seed: int = 0
    _encoder: Encoder | None = field(default=None, repr=False)

    def texts(self, rec: AttackRecord, n: int | None = None) -> list[str]:
        if self.form == "hotflip" and self._encoder is None:
            self._encoder = Encoder(self.retriever.embedder)
        related = ([h.chunk.text for h in self.retriever.search(rec.question, k=BAIT_PASSAGES, alpha=self.alpha)]
                   if self.form == "bait-noise" else [])
        return form_texts(rec, self.form, n, seed=self.seed, encoder=self._encoder, related=related)
