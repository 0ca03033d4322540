"""The CLI as a user runs it: subprocesses, exit codes, stderr messages, JSON that matches the schema."""

import json
import subprocess
import sys

import pytest

from ragsec_core.data.trace import validate

from .conftest import REPO


def ragsec(*args, store):
    return subprocess.run(
        [sys.executable, "-m", "ragsec_core.cli", *args, "--store", str(store)] if args[0] != "corpora"
        else [sys.executable, "-m", "ragsec_core.cli", *args],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )


@pytest.fixture
def store(tmp_path):
    return tmp_path / "traces.jsonl"


def _bad(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"id": "1", "text": "caf\xe9"}'.encode("latin-1"))
    return [
        (["ask", ""], "query is empty"),
        (["ask", "q", "--corpus", str(tmp_path / "nope.jsonl")], "corpus not found"),
        (["ask", "q", "--corpus", str(empty)], "empty"),
        (["ask", "q", "--corpus", str(latin)], "not valid UTF-8"),
        (["ask", "q", "--model", str(tmp_path / "no-model")], "model path not found"),
        (["ask", "q", "--alpha", "1.5"], "alpha must be within [0, 1]"),
        (["ask", "q", "--alpha", "-0.1"], "alpha must be within [0, 1]"),
        (["ask", "q", "--k", "0"], "k must be an integer >= 1"),
        (["ask", "q", "--variant", "nope"], "unknown variant"),
        (["traces", "show", "missing-id"], "no trace"),
    ]


def test_every_bad_input_exits_2_with_one_clear_message(tmp_path, store):
    for args, message in _bad(tmp_path):
        r = ragsec(*args, store=store)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert r.stderr.strip().count("\n") == 0, r.stderr  # one line


def test_ask_json_validates_and_is_stored_then_listed(store, llm):
    r = ragsec("ask", "What is the capital of Canada?", "--corpus", "general", "--variant", "embedded", "--json", store=store)
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)
    validate(record)
    assert record["labels"]["target"] and record["signals"]["par_mode"] == "labelled"
    listed = ragsec("traces", "list", "--json", store=store)
    assert json.loads(listed.stdout)[0]["trace_id"] == record["trace_id"]
    shown = ragsec("traces", "show", record["trace_id"][:-1], store=store)
    assert shown.returncode == 0 and record["trace_id"] in shown.stdout and "Answer:" in shown.stdout


def test_corpora_lists_samples(store):
    r = ragsec("corpora", store=store)
    assert r.returncode == 0 and "general" in r.stdout and "secops" in r.stdout
