"""`ragsec bench speed --merge`: split traceback runs pool into the result one run would give."""

import json
from pathlib import Path

from ragsec_core.bench.speed import summarise_traceback
from ragsec_core.cli.main import main


def _event(q, opt_s, naive_s, identical=True, path="fast_path"):
    return {"id": f"q{q}", "question_index": q, "paths": [path], "identical_spans": identical,
            "identical_success": True, "identical_answers": identical, "optimised_s": opt_s, "naive_s": naive_s,
            "optimised_fpe": 1.0, "naive_fpe": 3.0, "optimised_calls": 1, "naive_calls": 2, "tests": 2,
            "char_f1": 0.5, "resolved": True, "prompt_tokens": 600}


def test_merged_parts_pool_events_and_keep_other_sections(tmp_path, capsys):
    a = summarise_traceback([_event(3, 2.0, 10.0), _event(12, 4.0, 12.0)], Path("wiki_open_nq.json"))
    b = summarise_traceback([_event(46, 10.0, 20.0, identical=False, path="search")], Path("wiki_open_nq.json"))
    files = []
    for name, part in (("a", a), ("b", b | {"second_start_s": 4.2})):
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(part | {"complete": True}))
    out = tmp_path / "merged.json"
    assert main(["bench", "speed", "--merge", *map(str, files), "--out", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert merged["traceback_events"] == 3 and merged["merged_from"] == 2
    assert merged["traceback_speedup"] == round(42.0 / 16.0, 2)  # total naive / total optimised time
    assert merged["identical_spans"] is False and merged["identical_success"] is True
    assert merged["fast_path_events"] == 2 and merged["second_start_s"] == 4.2
    assert [e["question_index"] for e in merged["traceback_per_event"]] == [3, 12, 46]
    assert "traceback_speedup" in capsys.readouterr().out
