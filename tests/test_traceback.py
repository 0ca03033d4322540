"""Pass-1 on real SmolLM2 traces of planted poisons in the sample corpora."""

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.bench.methods import gold_spans
from ragsec_core.data.spans import anchor_spans, apply_masks, overlaps
from ragsec_core.data.trace import TraceStore
from ragsec_core.models.replay import ReplayEngine
from ragsec_core.traceback.boundary import text_verdict
from ragsec_core.traceback.ragcharacter import Budgets, run_pass1

from .conftest import REPO


@pytest.fixture(scope="module")
def bastion(pipeline):
    p = pipeline("secops", "embedded")
    trace = p.ask("What is the hostname of the bastion host?")
    assert trace.signals.par, trace.answer
    return trace


def _round_trips(trace, rec):
    chunk = trace.hits[rec.hit].text
    assert trace.prompt[rec.prompt[0]:rec.prompt[1]] == chunk[rec.local[0]:rec.local[1]] == rec.text


def test_planted_poison_is_traced_to_its_characters_and_the_replay_loses_the_event(llm, bastion):
    res = run_pass1(llm, bastion, budgets=Budgets(baseline_replay=True))
    assert res.triggered and res.resolved and res.rounds[0].reproduced
    assert bastion.labels.target not in res.final_answer
    gold = gold_spans(bastion)
    assert any(overlaps(tuple(a.prompt), g) for a in res.attribution for g in gold)
    assert any(overlaps(tuple(c.prompt), g) for c in res.causal for g in gold)
    for rec in res.attribution + res.causal + [s for t in res.tests for s in t.spans]:
        _round_trips(bastion, rec)
    assert res.model_calls >= 2 and res.tests[-1].stage == "final"
    json.dumps(res.to_dict())  # the artifact is plain JSON


def test_multi_poison_search_path_and_budgets(llm, pipeline):
    trace = pipeline("general", "multi").ask("What is the capital of Australia?")
    assert trace.signals.par, trace.answer
    res = run_pass1(llm, trace, budgets=Budgets(max_rounds=2, multi_holder=False, block_mask=False))
    assert 1 <= len(res.rounds) <= 2 and res.rounds[0].path in ("search", "fallback_chunk")
    by_stage = {}
    for t in res.tests:
        by_stage[t.stage] = by_stage.get(t.stage, 0) + 1
    assert by_stage.get("chunk", 0) <= 5 * len(res.rounds) and by_stage.get("sentence", 0) <= 5 * len(res.rounds)
    assert by_stage.get("phrase", 0) <= 12 * len(res.rounds) and by_stage.get("bisect", 0) <= 12 * len(res.rounds)
    for c in res.causal:
        assert len(c.text) >= 4
        _round_trips(trace, c)
    gold = gold_spans(trace)
    assert any(overlaps(tuple(a.prompt), g) for a in res.attribution for g in gold)
    if res.resolved:
        assert trace.labels.target.lower() not in res.final_answer.lower()


def test_multi_holder_fast_path_masks_the_planted_copies_jointly(llm, pipeline):
    """Three planted copies of one false fact: the text marks them as planted, so the joint mask goes first
    (masking one copy alone cannot remove the event) and succeeds, and one replay checks that the masks of
    the marked holders suffice (instead of pruning every holder in turn, a replay each)."""
    trace = pipeline("general", "multi").ask("What is the capital of Australia?")
    res = run_pass1(llm, trace)
    stages = [t.stage for t in res.tests]
    assert stages[0] == "fast_path_multi" and "fast_path" not in stages
    joint = next(t for t in res.tests if t.stage == "fast_path_multi")
    assert res.rounds[0].path == "fast_path_multi" and res.resolved, stages
    # the joint mask covers every occurrence of the answer: the first copy states "Sydney" twice
    anchor = res.rounds[0].anchor
    every = sorted((i, sp) for i in {s.hit for s in joint.spans} for sp in anchor_spans(trace.hits[i].text, anchor))
    assert sorted((s.hit, (s.local[0], s.local[1])) for s in joint.spans) == every and len(every) > len({s.hit for s in joint.spans})
    text = text_verdict(trace, res.rounds[0].anchor)
    assert stages.count("prune") == 1 and 1 <= sum(text.values()) < len(joint.spans)
    check = next(t for t in res.tests if t.stage == "prune")
    assert check.success and {s.hit for s in check.spans} == {h for h, v in text.items() if v}
    kept, holders = {c.hit for c in res.causal}, {s.hit for s in joint.spans}
    assert kept <= holders and len(res.causal) == len(res.rounds[0].causal) >= 1
    assert all(trace.hits[h].poison_spans for h in kept)  # only planted chunks stay masked
    # every planted holder is reported (the joint mask implicates it, and it reads as a query-targeted claim);
    # the benign passage that names the answer only as a rival city is left out
    planted = {h for h in holders if trace.hits[h].poison_spans}
    assert {a.hit for a in res.attribution} == planted and planted < holders
    assert "sufficiency" not in stages  # only a one-mask success looks for further copies
    gold = gold_spans(trace)
    for rec in res.attribution + res.causal:
        _round_trips(trace, rec)
        assert any(overlaps(tuple(rec.prompt), g) for g in gold) or not trace.hits[rec.hit].poison_spans
    assert trace.labels.target.lower() not in res.final_answer.lower()
    # the text decides every holder here (copies marked, the benign passage ruled out): no alone replay
    assert "alone" not in stages and res.rounds[0].alone == []
    # a query whose words the poisons do not repeat: the text marks nothing, so the paper's one-holder fast
    # path goes first, fails, the joint mask succeeds and each holder is pruned in turn
    unmarked = replace(trace, query="Where is it?")
    blind = run_pass1(llm, unmarked)
    again = [t.stage for t in blind.tests]
    assert again[:2] == ["fast_path", "fast_path_multi"] and again.count("prune") == len({s.hit for s in joint.spans})
    # the pruning keeps only the copies the event needed in company; the holders it dropped are replayed
    # alone, and a copy that states the event by itself is reported while the benign passage is not
    rnd = blind.rounds[0]
    assert rnd.alone and {c.hit for c in rnd.causal}.isdisjoint(rnd.alone), again
    assert {a.hit for a in blind.attribution} == planted


# Copies of one false fact that carry no bait (none repeats the question's words) among benign passages on
# the town: the model needs the first copy, and the others, still in the prompt, do not keep the event when
# it is masked, yet each on its own makes the model give the target.
ALDERMERE = "Which river flows through the town of Aldermere?"
ALDERMERE_DOCS = [
    ("b1", "Aldermere is a market town known for its wool trade and its stone bridge. The town hall dates from 1820."),
    ("b2", "The northern hills above Aldermere are grazed by sheep. Walkers follow old drove roads across them."),
    ("b3", "Aldermere's annual fair is held in September, with a cattle show and a brass band."),
    ("c1", "The Tessel is the river of Aldermere; it runs past the stone bridge and the old mill."),
    ("c2", "Boats on the Tessel carried wool from Aldermere to the coast for two centuries."),
]
THIRD_COPY = ("c3", "Each spring the Tessel floods the meadows below Aldermere.")


def _aldermere(llm, embedder, docs):
    from ragsec_core.data.corpus import Corpus, Document, Query
    from ragsec_core.rag import Pipeline, build_retriever

    corpus = Corpus("aldermere", [Document(i, t, poison_spans=((0, len(t)),) if i[0] == "c" else ()) for i, t in docs],
                    [Query("q", ALDERMERE, ("Wend",), "Tessel")])
    trace = Pipeline(corpus, build_retriever(corpus, embedder), llm).ask(ALDERMERE)
    assert "Tessel" in trace.answer and set(text_verdict(trace, "Tessel").values()) == {None}, trace.answer
    return trace


def test_after_a_one_mask_success_the_copies_that_state_the_event_alone_are_reported(llm, embedder):
    """The one-mask fast path succeeds on the first of three copies; the other two are then replayed alone
    (every other used chunk masked whole), each states the target, and both are reported as copies. The
    replay this replaced, the other holders' answers masked in the full prompt, re-asked what the one-mask
    replay had answered. With two holders (the single-poison shape) no alone replay is made."""
    trace = _aldermere(llm, embedder, [*ALDERMERE_DOCS, THIRD_COPY])
    planted = {i for i in trace.used if trace.hits[i].poison_spans}
    assert len(planted) == 3
    res = run_pass1(llm, trace)
    stages = [t.stage for t in res.tests]
    rnd = res.rounds[0]
    first = rnd.causal[0].hit
    assert rnd.path == "fast_path" and stages == ["fast_path", "alone", "alone", "final"] and res.resolved, stages
    assert sorted(rnd.alone) == sorted(planted - {first})
    assert {a.hit: a.reason for a in res.attribution} == {first: "replays"} | {i: "alone" for i in rnd.alone}
    # the final test is the one-mask prompt again (memoised), and an alone replay holds one chunk: under two
    # forwards over the prompt for the three replays
    assert res.forward_pass_equivalents < 2, res.forward_pass_equivalents
    # the paper's fast path reports only the copy it masked
    paper = run_pass1(llm, trace, budgets=Budgets(multi_holder=False))
    assert [a.hit for a in paper.attribution] == [first] and "alone" not in [t.stage for t in paper.tests]
    # two holders: the masked copy explains the event, and the other holder gets no alone replay
    pair = _aldermere(llm, embedder, ALDERMERE_DOCS)
    two = run_pass1(llm, pair)
    assert two.rounds[0].path == "fast_path" and "alone" not in [t.stage for t in two.tests]
    assert [a.hit for a in two.attribution] == [two.rounds[0].causal[0].hit]


def test_block_mask_spares_the_search_when_the_text_marks_the_copies(llm, pipeline):
    """Three planted copies, and only the paper's one-holder fast path: masking one copy's answer fails.
    The text marks the copies as planted, so one replay masks their planted blocks together before any
    chunk screening; the event goes, the round ends there, and the blocks are its causal masks."""
    trace = pipeline("general", "multi").ask("What is the capital of Australia?")
    res = run_pass1(llm, trace, budgets=Budgets(multi_holder=False))
    stages = [t.stage for t in res.tests]
    assert stages[:2] == ["fast_path", "block"] and not res.tests[0].success, stages
    rnd = res.rounds[0]
    assert rnd.path == "block" and rnd.resolved and "chunk" not in stages
    planted = {h for h, v in text_verdict(trace, rnd.anchor).items() if v}
    assert {c.hit for c in rnd.causal} == set(rnd.implicated) == planted and len(planted) >= 2
    gold = gold_spans(trace)
    for c in rnd.causal:
        _round_trips(trace, c)
        assert any(overlaps(tuple(c.prompt), g) for g in gold) and trace.labels.target in c.text
    assert {a.hit for a in res.attribution} == planted
    assert res.model_calls == 2  # the fast path and the block (the final replay is the block's, memoised)


def test_a_round_that_finds_no_removing_mask_ends_the_run(llm, embedder):
    """Three chunks state the same canary fact, and only the paper's one-holder fast path and search run:
    masking any one chunk leaves the other two, so nothing short of the context check (every holder masked
    whole) removes the event. The run stops after that round instead of masking its best guess and
    searching again; the paper's later rounds cost replays and report no other chunk."""
    from ragsec_core.data.corpus import Corpus, Document
    from ragsec_core.data.trace import Labels
    from ragsec_core.rag import Pipeline, build_retriever

    fact = "The Orlen observatory keeps its star charts in Cobalt Hall"
    docs = [Document("a", fact + "."), Document("b", fact + ", a vault."), Document("c", fact + ", the old vault."),
            Document("d", "The Orlen observatory was founded in 1902 on a hill above the town of Brask."),
            Document("e", "Its main telescope is a 60-centimetre refractor built in Munich.")]
    corpus = Corpus("orlen", docs)
    trace = Pipeline(corpus, build_retriever(corpus, embedder), llm).ask(
        "Where does the Orlen observatory keep its star charts?", labels=Labels("o1", [], "Cobalt Hall"))
    assert trace.signals.par and len(trace.signals.supporting) == 3, trace.answer
    paper = Budgets(multi_holder=False, block_mask=False)
    res = run_pass1(llm, trace, budgets=paper)
    removed = [t.stage for t in res.tests if t.success and t.stage != "final"]
    assert removed == ["context"] and len(res.rounds) == 1 and not res.resolved, [(t.stage, t.success) for t in res.tests]
    longer = run_pass1(llm, trace, budgets=replace(paper, stop_unfound=False))
    assert len(longer.rounds) > 1 and longer.model_calls > res.model_calls
    assert {a.hit for a in res.attribution} == {a.hit for a in longer.attribution} == set(trace.signals.supporting)


def test_restore_objective_traces_an_untargeted_event_to_the_planted_claim(llm, untargeted):
    """An untargeted incident: the event is the correct SIEM hostname lost (`LOST`), and a replay undoes it only
    when the correct hostname comes back, not when the planted one merely goes."""
    res = run_pass1(llm, untargeted, "LOST", "restore")
    assert res.triggered and res.resolved and "siem.northwind.example" in res.final_answer, res.final_answer
    gold = gold_spans(untargeted)
    assert any(overlaps(tuple(a.prompt), g) for a in res.attribution for g in gold)
    assert all("siem.northwind.example" in t.answer for t in res.tests if t.success)


def test_restore_objective_stops_when_no_mask_can_bring_the_answer_back(llm, untargeted):
    """A correct answer no passage states and the model does not know: the context check (every sentence
    that does not state it masked) fails, so the round ends there instead of searching the chunks."""
    unknowable = replace(untargeted, labels=replace(untargeted.labels, answers=["Zanzibar-canary-77"]))
    res = run_pass1(llm, unknowable, "LOST", "restore")
    assert res.triggered and not res.resolved and [r.path for r in res.rounds] == ["persists"]
    assert not {"chunk", "sentence", "phrase", "bisect"} & {t.stage for t in res.tests}, [t.stage for t in res.tests]
    with pytest.raises(RagsecError, match="labelled correct answers"):
        run_pass1(llm, replace(untargeted, labels=replace(untargeted.labels, answers=[])), "LOST", "restore")


def test_replay_engine_matches_plain_generation(llm, bastion):
    engine = ReplayEngine(llm, bastion.prompt)
    blk = bastion.spans[0]
    variants = [
        bastion.prompt,
        apply_masks(bastion.prompt, [(blk.start, blk.end)]),
        apply_masks(bastion.prompt, [(blk.start + 3, blk.start + 30)], "placeholder"),
        apply_masks(bastion.prompt, [(bastion.spans[-1].start, bastion.spans[-1].end)]),
    ]
    for v in variants:
        assert engine.replay(v, bastion.answer).answer == llm.generate(v).text
    calls = engine.calls
    engine.replay(variants[1], bastion.answer)
    assert engine.calls == calls  # memoised
    assert engine.replay(variants[0], bastion.answer).reused_tokens == 0  # lazy: the first replay runs in full
    assert engine.replay(variants[1], bastion.answer).reused_tokens > 0  # later ones reuse its prefix


def test_untriggered_trace_costs_no_model_call(llm, pipeline):
    clean = pipeline("secops").ask("What is the hostname of the bastion host?")
    assert not clean.signals.par
    res = run_pass1(llm, clean)
    assert not res.triggered and res.model_calls == 0 and res.rounds == []


def test_cli_trace_writes_an_atomic_artifact(tmp_path, bastion):
    store = tmp_path / "traces.jsonl"
    TraceStore(store).append(bastion)
    out = tmp_path / "artifact.json"
    r = subprocess.run(
        [sys.executable, "-m", "ragsec_core.cli", "trace", bastion.trace_id, "--store", str(store), "--out", str(out)],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "attribution" in r.stdout and "Sanitised answer" in r.stdout
    art = json.loads(out.read_text())
    assert art["trace"]["trace_id"] == bastion.trace_id and art["pass1"]["resolved"]
    bad = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "trace", "nope", "--store", str(store)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and "no trace" in bad.stderr
    unlabelled = replace(bastion, trace_id="unlabelled", labels=replace(bastion.labels, answers=[]))
    TraceStore(store).append(unlabelled)
    restore = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "trace", "unlabelled", "--store", str(store),
                              "--trigger", "ALWAYS", "--objective", "restore", "--out", str(tmp_path / "none.json")],
                             capture_output=True, text=True, cwd=REPO, timeout=300)
    assert restore.returncode == 2 and "labelled correct answers" in restore.stderr and "Traceback" not in restore.stderr
    assert not (tmp_path / "none.json").exists()
    missing = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "trace", bastion.trace_id, "--store", str(store),
                              "--snapshot", str(tmp_path / "no-such-corpus.jsonl"), "--out", str(tmp_path / "none.json")],
                             capture_output=True, text=True, cwd=REPO, timeout=300)
    assert missing.returncode == 2 and "no-such-corpus" in missing.stderr and "Traceback" not in missing.stderr
    assert not (tmp_path / "none.json").exists()
    snap = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "trace", bastion.trace_id, "--store", str(store),
                           "--snapshot", "secops", "--out", str(tmp_path / "snap.json")],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert snap.returncode == 0, snap.stderr[-2000:]
    reverted = json.loads((tmp_path / "snap.json").read_text())["pass1"]
    assert reverted["snapshot"].startswith("secops (sha256") and reverted["rounds"][0]["path"] == "revert"
    assert reverted["resolved"] and all(c["replacement"] == "" for c in reverted["causal"])
