"""Nothing lost: a writer process is SIGKILLed mid-write again and again; the trace store and the
artifact it rewrites stay readable, with every record whole (checksummed) and none torn.

Also: stores written by other schema versions, or hand-edited, load or fail with a clear message."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.trace import Trace, TraceStore

from .conftest import REPO

MID_WRITE_KILLS = 10  # kills that must land inside a write for the test to prove anything
MAX_KILLS = 400  # how long to keep trying; timing decides where each kill lands, so count, don't hope

# The writer: appends full traces (a 16 KB checksummed payload in `system`) to the store and rewrites
# a checksummed artifact, as fast as it can, until it is killed. It says "go" once imports are done,
# so the kill lands inside the write loop, not during interpreter start-up.
WRITER = r"""
import hashlib, json, os, sys
from ragsec_core._util.atomic import write_text_atomic
from ragsec_core.data.trace import Labels, PromptSpan, Signals, Trace, TraceHit, TraceStore, new_trace_id, now_iso
store, artifact = TraceStore(sys.argv[1]), sys.argv[2]
print("go", flush=True)
n = 0
while True:
    n += 1
    payload = (f"{os.getpid()}-{n}-" * 2000)[:16000]
    text = "The capital is Sydney."
    prompt = f"[1] {text}\nQ"
    t = Trace(new_trace_id(), now_iso(), "q", {"id": "m"}, {"corpus": "c"},
              [TraceHit(1, "d", "d#0", "", text, 0, len(text), 1.0, 1.0, 1.0, 1.0, 1.0)], [0],
              payload, prompt, [PromptSpan(0, "d#0", 4, 4 + len(text))], hashlib.sha256(payload.encode()).hexdigest(),
              Signals(False, False, "label-free", None, None, None, []), Labels(), {"generation_ms": 1.0})
    store.append(t)
    body = json.dumps({"n": n, "payload": payload * 3, "sha": hashlib.sha256((payload * 3).encode()).hexdigest()})
    write_text_atomic(artifact, body)
"""


def _check_store(store: TraceStore) -> int:
    records = list(store.records())
    assert store.skipped == 0, "a torn or partial line is in the store"
    for r in records:
        assert hashlib.sha256(r["system"].encode()).hexdigest() == r["answer"], "record content is partial"
        Trace.from_dict(r)  # every record loads as a Trace
    return len(records)


def _check_artifact(path) -> None:  # type: ignore[no-untyped-def]
    if path.exists():
        a = json.loads(path.read_text(encoding="utf-8"))
        assert hashlib.sha256(a["payload"].encode()).hexdigest() == a["sha"]


@pytest.mark.slow
def test_sigkill_mid_write_never_tears_a_record(tmp_path):
    store_path, artifact = tmp_path / "traces.jsonl", tmp_path / "artifacts" / "a.pass1.json"
    store = TraceStore(store_path)
    rng = random.Random(9)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    counts, killed, mid_write, kills = [0], 0, 0, 0
    while mid_write < MID_WRITE_KILLS and kills < MAX_KILLS:
        kills += 1
        before = set(tmp_path.rglob("*.tmp"))
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(store_path), str(artifact)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        assert proc.stdout.readline().strip() == b"go", proc.stderr.read().decode()[-2000:]
        time.sleep(rng.uniform(0.0, 0.15))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        killed += proc.returncode == -signal.SIGKILL
        mid_write += bool(set(tmp_path.rglob("*.tmp")) - before)  # the kill interrupted a write in progress
        counts.append(_check_store(store))
        _check_artifact(artifact)
        assert counts[-1] >= counts[-2], "a kill lost records that were already stored"
    assert killed == kills and counts[-1] > 0
    assert mid_write >= MID_WRITE_KILLS, f"only {mid_write} of {kills} kills landed mid-write: the test proves little"
    orphans = len(list(tmp_path.glob(".traces.jsonl.*.tmp")))
    print(f"\n{killed} SIGKILLs survived ({mid_write} mid-write); {counts[-1]} records intact; {orphans} orphans")
    # Orphans are harmless (readers never look at them); the next append, holding the lock, removes them.
    subprocess.run([sys.executable, "-c", WRITER.replace("while True", "while n < 1"), str(store_path), str(artifact)],
                   env=env, check=True, capture_output=True, timeout=60)
    assert not list(tmp_path.glob(".traces.jsonl.*.tmp")) and _check_store(store) == counts[-1] + 1


# ---------------------------------------------------------------- other versions and hand-edited stores

def test_stores_of_other_versions_or_hand_edits_fail_clearly(tmp_path, make_trace):
    store = TraceStore(tmp_path / "t.jsonl")
    good = make_trace(answer="fine")
    store.append(good)
    base = good.to_dict()
    lines = [
        {k: v for k, v in base.items() if k != "schema_version"} | {"trace_id": "pre-versioning"},
        base | {"schema_version": 3, "trace_id": "from-the-future"},
        base | {"schema_version": "1", "trace_id": "string-version"},
        {"schema_version": 1, "trace_id": "missing-fields"},
        base | {"trace_id": "bad-hit", "hits": [{"rank": 1}]},
        base | {"trace_id": "extra-field", "unknown": 1},
    ]
    with open(store.path, "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(rec) + "\n" for rec in lines)
        fh.write('["a list, not a record"]\n42\n{"torn": \n')
    expected = {
        "pre-versioning": "schema version None", "from-the-future": "schema version 3",
        "string-version": "schema version 1", "missing-fields": "malformed", "bad-hit": "malformed",
        "extra-field": "malformed",
    }
    for trace_id, message in expected.items():
        with pytest.raises(RagsecError, match=message) as err:
            store.get(trace_id)
        assert "Re-run" in str(err.value) or "malformed" in str(err.value)
    assert store.get(good.trace_id).answer == "fine"
    assert len(list(store.records())) == 7 and store.skipped == 3
    r = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "traces", "list", "--store", str(store.path)],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0 and good.trace_id in r.stdout and "skipped 3 unreadable" in r.stderr
    r = subprocess.run([sys.executable, "-m", "ragsec_core.cli", "traces", "show", "from-the-future", "--store",
                        str(store.path)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "schema version 3" in r.stderr and r.stderr.count("\n") == 1
