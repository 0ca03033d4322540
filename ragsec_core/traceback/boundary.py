"""Where the poison ends: the attribution boundary of Pass-1, as a pure function of the logged evidence.

Pass-1's replays decide *which* chunks the event needs (and the minimal causal span in each); this module
decides *how much* of each implicated chunk is reported: the textual rules draw the planted block around
the claim (`splice.region`) and over a perturbed copy's misspelled sentences (`misspelling.grow`), and the
local LM's readings grow it back over the set-up sentences written for the attack (`premise.reach_back`)
and on over the sentences that continue it (`cohesion.extend`); further copies of a claim that several
reported holders state are found by their likeness to those (`copies`: MiniLM, deterministic and local,
so it needs no logging). It reads the trace, the finished Pass-1 result (each round's event anchor, causal
spans, earlier rounds' masks) and the readings; Pass-1 takes the readings with the model and logs them, so a
benchmark that stored its traces and artifacts re-scores a new rule offline (`bench traceback --rescore
DIR`) and the live run and the re-score agree by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragsec_core.data.markup import lead_in, through_footer, through_notes, through_sign_off, whole_units
from ragsec_core.data.quotes import whole_quotation
from ragsec_core.data.spans import Span, attribution_span, merge, overlaps, trim
from ragsec_core.data.trace import Trace, contains_norm
from ragsec_core.traceback.cohesion import extend
from ragsec_core.traceback.copies import alike_copies
from ragsec_core.traceback.evidence import Evidence
from ragsec_core.traceback.misspelling import grow
from ragsec_core.traceback.premise import reach_back, set_up_before_claim
from ragsec_core.traceback.result import Round, SpanRecord, TracebackResult
from ragsec_core.traceback.snapshot import changed_sentences
from ragsec_core.traceback.splice import query_targeted, region

WHOLE_CHUNK_PATHS = ("fallback_chunk",)  # Pass-1 found no span inside the chunk: the chunk is reported whole
# With a trusted snapshot (`Pass1._revert`): reverting the changes since it undid the event, or did not
# (nothing is reported: the event does not come from the corpus's changes)
REVERT_PATH, UNCHANGED_PATH = "revert", "unchanged"
# The rounds after which a holder that states the event on its own is reported (`Round.alone`): not
# `persists`/`fallback_chunk` (no mask was found). Older artifacts hold no alone replays after a one-mask
# success (`fast_path`): the sufficiency replays that preceded them put their finds in the implicated hits.
ALONE_PATHS = ("fast_path", "fast_path_multi", "block", "search")
# Why a chunk was reported (`SpanRecord.reason`), for the analyst: the replays' evidence is causal (the event
# needed the chunk); the others name planted copies that the event did not need.
REASONS = {
    "replays": "the replays: masking it removed the event (alone or with the other copies), or it brought the "
               "event back on its own",
    "whole": "the replays: the event needed the whole chunk (no span inside it removed the event)",
    "revert": "the snapshot: reverting its changes since undid the event",
    "marked": "the text: it states the answer as a claim aimed at the query (a copy the event may not need)",
    "alone": "the alone replay: the model states the answer from this chunk by itself",
    "refuted": "two witnesses: the replays refute that a claim above explains the event, and a sentence before "
               "its claim was written for the attack's premise",
    "alike": "likeness: its claim says what the reported copies' claims say (a copy the event did not need)",
}


def span_record(trace: Trace, hit: int, local: Span) -> SpanRecord:
    """A chunk-local span with its prompt offsets (the trace's used-hit block of that chunk)."""
    h = trace.hits[hit]
    block = next(s for s in trace.spans if s.hit == hit)
    return SpanRecord(hit, h.chunk_id, h.rank, list(local), [block.start + local[0], block.start + local[1]],
                      h.text[local[0] : local[1]])


def local_masks(trace: Trace, hit: int, masks: Sequence[Span]) -> list[Span]:
    """Prompt-global masks clipped to one used chunk, in chunk-local coordinates."""
    blk = next(s for s in trace.spans if s.hit == hit)
    return [(max(s, blk.start) - blk.start, min(e, blk.end) - blk.start)
            for s, e in masks if overlaps((s, e), (blk.start, blk.end))]


def local_subs(trace: Trace, hit: int, subs: dict[Span, str]) -> dict[Span, str]:
    """The substitutions (prompt-global span -> snapshot text) that lie in one used chunk, chunk-local."""
    blk = next(s for s in trace.spans if s.hit == hit)
    return {(a - blk.start, b - blk.start): r for (a, b), r in subs.items() if blk.start <= a <= b <= blk.end}


def seed_span(text: str, anchor: str, masked: Sequence[Span], causal: Span | None) -> Span | None:
    """Where the claim sits in one chunk: the answer-anchored span (unless an earlier round masked it),
    else the replay's causal span in that chunk. The anchor seeds only a chunk that states it: a free-text
    answer no chunk states (an untargeted event's) would otherwise seed on its first word, "The"."""
    if causal is not None and not contains_norm(text, anchor):
        return causal
    span = attribution_span(text, anchor)
    if span is not None and not any(overlaps(span, m) for m in masked):
        return span
    return causal


def attribute_hit(trace: Trace, hit: int, anchor: str, masks: Sequence[Span], causal: Span | None,
                  evidence: Evidence) -> SpanRecord:
    """The reported span in one implicated chunk: the planted region around the claim (`splice.region`),
    grown over the misspelled sentences next to it when it is a typo-perturbed copy (`misspelling.grow`)
    and over the quotation whose first or last sentence it reaches (`quotes.whole_quotation`),
    back over the set-up sentences written for the attack's premise (`premise.reach_back`) and on over the
    sentences that continue it (`cohesion.extend`) and through a post's footer and the wiki notes after it
    (`markup.through_footer`, `markup.through_notes`), or the causal span alone when nothing anchors it."""
    text = trace.hits[hit].text
    masked = local_masks(trace, hit, masks)
    seed = seed_span(text, anchor, masked, causal)
    if seed is None:
        return span_record(trace, hit, causal or (0, len(text)))
    block = whole_quotation(text, grow(text, region(text, seed, anchor, trace.query)))
    block = lead_in(text, reach_back(trace, hit, block, anchor, evidence))
    block = through_sign_off(text, block)
    block = whole_units(text, extend(trace, hit, block, evidence))
    return span_record(trace, hit, through_notes(text, through_footer(text, block)))


def verdict(rnd: Round) -> list[int]:
    """The hits the round's replays implicated (older artifacts: the hits of its attribution)."""
    return list(rnd.implicated) or [r.hit for r in rnd.attribution]


def text_verdict(trace: Trace, anchor: str) -> dict[int, bool | None]:
    """What the text alone says of each used chunk that holds the event string: True, it states it as a
    query-targeted claim (`splice.query_targeted`), so it is reported whatever the replays say; False,
    it reads as a benign mention and a chunk ranked above it holds such a claim (that claim explains the
    event), so it is not reported even if a fragile model needed it (unless the replays refute that and the
    premise reading marks it: `refuted_copies`); None, the replays decide."""
    holders = [i for i in trace.used if contains_norm(trace.hits[i].text, anchor)]
    shaped = {i: query_targeted(trace.hits[i].text, anchor, trace.query) for i in holders}
    best = min((trace.hits[i].rank for i in holders if shaped[i]), default=None)
    return {i: True if shaped[i] else False if best is not None and best < trace.hits[i].rank else None
            for i in holders}


def implicated(trace: Trace, rnd: Round, reported: set[int]) -> list[int]:
    """The chunks `implicated_why` reports, without the reasons."""
    return [h for h, _ in implicated_why(trace, rnd, reported)]


def implicated_why(trace: Trace, rnd: Round, reported: set[int]) -> list[tuple[int, str]]:
    """The chunks a round reports, each with its reason (`REASONS`): the replays' verdict (the chunks whose
    masks the event needed and those that restored it alone), less the holders the text rules out, plus
    every holder the text reports (a further planted copy, which a fragile model may not need)
    (`text_verdict`) and every holder the text leaves undecided that states the event on its own
    (`Round.alone`: a copy without bait). Without any
    query-targeted claim, a holder that the joint mask merely covered is dropped."""
    text = text_verdict(trace, rnd.anchor)
    hits = [h for h in verdict(rnd) if h not in reported and text.get(h) is not False]
    if rnd.path == "fast_path_multi" and not any(text.values()):
        needed = {r.hit for r in rnd.causal}
        hits = [h for h in hits if h in needed]
    alone = set(rnd.alone) if rnd.path in ALONE_PATHS else set()
    copies = [i for i, v in text.items() if (v or (v is None and i in alone)) and i not in hits and i not in reported]
    return [(h, "replays") for h in hits] + [(i, "marked" if text[i] else "alone") for i in copies]


def reported_hits(trace: Trace, rnd: Round, reported: set[int]) -> list[int]:
    """The chunks `reported_why` reports, without the reasons."""
    return [h for h, _ in reported_why(trace, rnd, reported)]


def reported_why(trace: Trace, rnd: Round, reported: set[int]) -> list[tuple[int, str]]:
    """The chunks a round reports that no earlier round did, each with its reason: the replays' verdict alone
    after a fallback or a revert (the snapshot, not the text, says what was planted), else `implicated_why`."""
    if rnd.path in WHOLE_CHUNK_PATHS:
        return [(h, "whole") for h in verdict(rnd) if h not in reported]
    if rnd.path in (REVERT_PATH, UNCHANGED_PATH):
        return [(h, "revert") for h in verdict(rnd) if h not in reported]
    return implicated_why(trace, rnd, reported)


def refuted_copies(trace: Trace, rnd: Round, reported: set[int], evidence: Evidence) -> list[int]:
    """Holders the text rules out (`text_verdict` False) that a joint-mask round reports after all, because two
    independent readings agree that they are copies. The replays: after the joint mask, masking only the
    marked holders left the event (`Pass1._causal_set` then keeps every holder), which refutes the premise of
    the ruling-out, that the marked claim above explains the event. The local LM: a sentence before the
    holder's claim reads better after the attack's premise than in place (`premise.set_up_before_claim`),
    as a copy's set-up does and a benign passage's text does not. At P = 5 these are the copies whose
    sentences carry no bait below one that restates the question; a benign passage that the event needs as
    much as a copy (NQ q30's on mitochondria) fails the reading and stays out."""
    if rnd.path != "fast_path_multi":
        return []
    text = text_verdict(trace, rnd.anchor)
    return [r.hit for r in rnd.causal if text.get(r.hit) is False and r.hit not in reported
            and set_up_before_claim(trace, r.hit, rnd.anchor, evidence)]


def alike(trace: Trace, rnd: Round, hits: list[int], reported: set[int]) -> list[int]:
    """Further copies of the claim of the round's reported holders (`copies.alike_copies`: the claim sentence
    said again in other words), unless the round reports whole chunks or a revert (there the replays or the
    snapshot, not the text, say what was planted)."""
    if rnd.path in (*WHOLE_CHUNK_PATHS, REVERT_PATH, UNCHANGED_PATH):
        return []
    return alike_copies(trace, rnd.anchor, hits, reported)


def attribute_rounds(trace: Trace, result: TracebackResult, evidence: Evidence | None = None) -> list[list[SpanRecord]]:
    """Each round's reported spans, drawn with this module's rule from the logged evidence: the chunks the
    replays implicated (and textual copies, `implicated`; copies the text ruled out that the replays and the
    premise reading implicate, `refuted_copies`; copies that say what two or more of those say, `alike`)
    that no earlier round reported, each one's span drawn around its claim and carrying why its chunk was
    reported (`SpanRecord.reason`). Pass-1 stores these as the rounds' attribution, reading with the model
    (`evidence`); `--rescore` redraws them from the result's stored readings (the default)."""
    evidence = Evidence(result.cohesion) if evidence is None else evidence
    out: list[list[SpanRecord]] = []
    masks: list[Span] = []
    reported: set[int] = set()
    for rnd in result.rounds:
        causal = {r.hit: (r.local[0], r.local[1]) for r in rnd.causal}
        why = dict(reported_why(trace, rnd, reported))
        why |= {h: "refuted" for h in refuted_copies(trace, rnd, reported, evidence) if h not in why}
        why |= {h: "alike" for h in alike(trace, rnd, list(why), reported)}
        hits = list(why)
        if rnd.path in WHOLE_CHUNK_PATHS:
            spans = [span_record(trace, h, (0, len(trace.hits[h].text))) for h in hits]
        elif rnd.path == REVERT_PATH:
            spans = [s for h in hits for s in reverted(trace, h, rnd, masks, evidence)]
        else:
            spans = [attribute_hit(trace, h, rnd.anchor, masks, causal.get(h), evidence) for h in hits]
        spans = [replace(r, reason=why[r.hit]) for r in spans]
        reported |= {r.hit for r in spans}
        out.append(spans)
        masks += [r.prompt_span for r in rnd.causal]
    return out


def reverted(trace: Trace, hit: int, rnd: Round, masks: Sequence[Span], evidence: Evidence) -> list[SpanRecord]:
    """A reverted chunk's reported spans: added text exactly (the snapshot says where it starts and ends; a
    blind article cut off mid-sentence must not take the host sentence it runs into), and the sentences that
    changed words touch (`snapshot.changed_sentences`: a typo-perturbed copy's unit, GARAG's gold). A chunk
    new as a whole (a document added since the snapshot) has no trusted text to bound the poison, so the
    boundary's rule draws it, as in a masked chunk."""
    text = trace.hits[hit].text
    recs = [r for r in rnd.causal if r.hit == hit]
    if [tuple(r.local) for r in recs] == [(0, len(text))]:
        return [attribute_hit(trace, hit, rnd.anchor, masks, None, evidence)]
    added = [trim(text, (r.local[0], r.local[1])) for r in recs if not r.replacement and r.local[1] > r.local[0]]
    changed = [(r.local[0], r.local[1]) for r in recs if r.replacement or r.local[1] == r.local[0]]
    return [span_record(trace, hit, sp) for sp in merge(added + changed_sentences(text, changed))]


def reattribute(trace: Trace, result: TracebackResult, evidence: Evidence | None = None) -> list[SpanRecord]:
    """A finished result's reported attribution (every round's, `attribute_rounds`), in round order."""
    return [r for spans in attribute_rounds(trace, result, evidence) for r in spans]
