"""`--ray`: benchmark runs fanned out on a real local Ray cluster give the serial run's results file.

The cluster is `ray start --head --block` on free ports in its own session and temp folder, stopped by
ending that process (which stops every Ray process it started, and only those). The runs are real: the
SmolLM2 victim, MiniLM, the attack data of `../shared/data`; an actor is killed for real with SIGKILL
while it works, and a work function that ends its own process (defined here, in the test) is a real
actor death too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.cli.main import main

from .browser import free_port
from .conftest import REPO, shared_data
from .servers import ChromaServer, held_by

pytest.importorskip("ray", reason="the [scale] extra is not installed")
psutil = pytest.importorskip("psutil")

RAY = Path(sys.executable).with_name("ray")
TIMING = {"seconds", "seconds_per_event", "elapsed_s", "trace_id"}  # wall times, and trace ids (random per run)
RUN_FLAGS = ("ray", "out", "index", "index_build")  # flags that differ between the runs compared


def _stop(proc: subprocess.Popen[bytes], tmp: str) -> None:
    """End `ray start --block` (which stops the processes it started), then any straggler of its group."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(60)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    shutil.rmtree(tmp, ignore_errors=True)


def _start_cluster() -> tuple[subprocess.Popen[bytes], str, int] | None:
    """One try at a 2-CPU head node on free ports: (process, temp folder, GCS port) once its GCS and its
    client server (the last part `ray start` starts) listen and it is still whole a moment later, else None.
    A port free when drawn can be taken before Ray binds it (by another worker, or by Ray's own randomly
    placed ports); `ray start --block` then stops the whole cluster seconds after its GCS answered, and a
    driver connected to it is ended by Ray a minute later. A stop's CI lost its test worker that way."""
    port, client = free_port(), free_port()
    tmp = tempfile.mkdtemp(prefix="rgs-ray-", dir="/tmp")  # short: Ray's unix sockets live under it
    env = os.environ | {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen(
        [str(RAY), "start", "--head", "--block", "--num-cpus", "2", "--node-ip-address", "127.0.0.1", "--port", str(port),
         "--ray-client-server-port", str(client), "--dashboard-agent-listen-port", str(free_port()),
         "--include-dashboard=false", "--disable-usage-stats", "--temp-dir", tmp],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd=REPO)
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline and not (held_by(proc.pid, port) and held_by(proc.pid, client)):
        time.sleep(0.3)
    time.sleep(3)  # `ray start --block` checks its processes each second and stops all if one has died
    if proc.poll() is None and held_by(proc.pid, port) and held_by(proc.pid, client):
        return proc, tmp, port
    _stop(proc, tmp)
    return None


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, Any]]:
    """(address, the `ray start` process) of a 2-CPU head node that lives for this module."""
    for _ in range(3):
        if (started := _start_cluster()) is not None:
            break
    else:
        pytest.fail("ray start did not keep a cluster up in 3 tries")
    proc, tmp, port = started
    try:
        yield f"127.0.0.1:{port}", psutil.Process(proc.pid)
    finally:
        _stop(proc, tmp)


def comparable(x: Any) -> Any:
    """The results without wall times, trace ids and the flags that differ between the compared runs."""
    if isinstance(x, dict):
        return {k: comparable(v) for k, v in x.items()
                if k not in TIMING and not (k in RUN_FLAGS and "data" in x)}  # `data`: this is the config
    if isinstance(x, list):
        return [comparable(v) for v in x]
    return x


# ---------------------------------------------------------------- errors (no cluster, no model)

def test_unreachable_or_malformed_address_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "one.json"
    data.write_text(json.dumps([{"id": "a", "question": "q?", "adv_texts": ["x"], "incorrect_answer": "b", "answer": "c"}]))
    nobody = f"127.0.0.1:{free_port()}"
    for argv, said in (
        (["traceback", "--data", str(data), "--ray", nobody], f"--ray {nobody}: no Ray cluster answers there"),
        (["chameleon", "--out", str(tmp_path / "c.json"), "--ray", nobody], "no Ray cluster answers there"),
        (["traceback", "--data", str(data), "--ray", "nonsense"], "--ray takes 'auto' or a Ray cluster address host:port"),
    ):
        t0 = time.perf_counter()
        assert main(["bench", *argv]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err and err.count("\n") == 1, err
        assert time.perf_counter() - t0 < 30  # not Ray's own minutes-long wait for a cluster
    assert not (tmp_path / "c.json").exists()


# ---------------------------------------------------------------- the fan-out itself (a cluster, no model)

def _setup(log: str) -> dict[str, Any]:
    return {"log": log}


def _work(state: dict[str, Any], item: Any) -> Any:
    """Every attempt is logged with its process id; `die` ends its actor's process, `bad` raises."""
    with open(state["log"], "a") as fh:
        fh.write(f"{item} {os.getpid()}\n")
    if item == "die":
        os._exit(1)
    if item == "bad":
        raise RagsecError("bad item")
    return item * 10


def test_a_dead_actor_is_retried_once_on_a_fresh_actor_then_reported(cluster: tuple[str, Any], tmp_path: Path) -> None:
    from ragsec_core.bench.fanout import Failed, connected, ray_map

    log = tmp_path / "attempts.log"
    with connected(cluster[0]):
        got = list(ray_map(_setup, (str(log),), _work, [1, "die", 2], threads=1))
        with pytest.raises(RagsecError, match="bad item"):  # the work's own error: raised as in a serial run
            list(ray_map(_setup, (str(log),), _work, [5, "bad"], threads=1))
        with pytest.raises(RagsecError, match="no node of the Ray cluster has that many CPUs"):
            list(ray_map(_setup, (str(log),), _work, [6], threads=3))
    assert [i for i, _ in got] == [0, 1, 2]  # in item order
    assert [r for _, r in got if not isinstance(r, Failed)] == [10, 20]
    assert isinstance(got[1][1], Failed) and "Actor" in got[1][1].error
    deaths = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("die ")]
    assert len(deaths) == 2 and deaths[0] != deaths[1]  # tried, then retried once in a fresh process


# ---------------------------------------------------------------- the benchmarks (real models and data)

def traceback_argv(out: Path, *extra: str) -> list[str]:
    data = shared_data("stealthy", "wiki_open_nq.json")
    return ["bench", "traceback", "--data", str(data), "--limit", "3", "--poisons-per-query", "5", "--threads", "1",
            "--out", str(out), *extra]


@pytest.fixture(scope="module")
def serial_traceback(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("serial") / "results.json"
    assert main(traceback_argv(out)) == 0
    res: dict[str, Any] = json.loads(out.read_text())
    assert res["complete"] and res["events"] >= 1 and res["failed"] == []  # a Pass-1 event is compared too
    return res


def actor_at_work(cluster_proc: Any) -> Any | None:
    """A process of this cluster running an item (Ray titles it `ray::_Actor.run`)."""
    for p in cluster_proc.children(recursive=True):
        try:
            if " ".join(p.cmdline()).startswith("ray::_Actor.run"):
                return p
        except psutil.Error:
            continue
    return None


@pytest.mark.model
def test_ray_traceback_equals_serial_even_when_an_actor_is_killed(
    cluster: tuple[str, Any], serial_traceback: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "results.json"
    run = subprocess.Popen([sys.executable, "-m", "ragsec_core.cli", *traceback_argv(out, "--ray", cluster[0])],
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.time() + 600
    while run.poll() is None and time.time() < deadline:
        if killed is None and (victim := actor_at_work(cluster[1])) is not None:
            victim.send_signal(signal.SIGKILL)
            killed = victim.pid
        time.sleep(0.2)
    stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == 0, stderr[-3000:]
    assert killed is not None, "no actor was seen at work"
    res = json.loads(out.read_text())
    assert res["complete"] and res["failed"] == []  # the killed actor's question was retried, not dropped
    assert comparable(res) == comparable(serial_traceback)
    assert res["config"]["ray"] == cluster[0] and "char_f1" in stdout


@pytest.mark.model
def test_ray_traceback_over_a_served_chroma_collection_equals_the_in_process_serial_run(
    cluster: tuple[str, Any], serial_traceback: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("chromadb", reason="the [scale] extra is not installed")
    server = ChromaServer(tmp_path)
    try:
        out = tmp_path / "results.json"
        url = server.url("nq-context")
        assert main(traceback_argv(out, "--ray", cluster[0], "--index", url, "--index-build")) == 0  # the driver builds
        res = json.loads(out.read_text())
        assert res["complete"] and res["failed"] == [] and res["config"]["index"] == url
        assert comparable(res) == comparable(serial_traceback)
        embedded = ["--ray", cluster[0], "--index", f"chroma:{tmp_path / 'db'}/nq-context"]
        assert main(traceback_argv(tmp_path / "x.json", *embedded)) == 2
        assert "--ray needs a served collection" in capsys.readouterr().err
    finally:
        server.stop()


@pytest.mark.model
def test_traceback_continues_an_incomplete_results_file(
    serial_traceback: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An interrupted run's file (only the event question done, its event marked) is continued: the mark
    survives and the other questions are added, giving the uninterrupted run's results."""
    event = serial_traceback["per_event"][0]
    q = event["question"]
    out = tmp_path / "results.json"
    partial = serial_traceback | {"complete": False, "per_event": [event | {"mark": "kept"}],
                                  "questions": [d for d in serial_traceback["questions"] if d["question"] == q]}
    out.write_text(json.dumps(partial))
    assert main(traceback_argv(out)) == 0
    assert f"resuming {out}: 1 question(s) already done" in capsys.readouterr().err
    res = json.loads(out.read_text())
    assert res["per_event"][0].pop("mark") == "kept"
    assert res["complete"] and comparable(res) == comparable(serial_traceback)


@pytest.mark.model
def test_ray_dscan_equals_serial(cluster: tuple[str, Any], tmp_path: Path) -> None:
    data = shared_data("stealthy", "wiki_open_nq.json")
    outs = []
    for name, extra in (("serial", []), ("ray", ["--ray", cluster[0]])):
        (tmp_path / name).mkdir()
        out = tmp_path / name / "results.json"  # one file name: the recorded command lines match
        argv = ["bench", "dscan", "--data", str(data), "--limit", "4", "--n-samples", "2", "--max-new-tokens", "8",
                "--no-zero-shot", "--out", str(out), *extra]
        assert main(argv) == 0
        outs.append(out)
    raw = [Path(f"{o}.raw.jsonl").read_text() for o in outs]
    assert raw[0] == raw[1] and raw[0].count("\n") == 8  # the same rows, in the same order
    serial, ray = (json.loads(o.read_text()) for o in outs)
    assert comparable(serial) == comparable(ray)
