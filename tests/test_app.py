"""The Investigate page through Streamlit's AppTest (same process, real models)."""

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import REPO


@pytest.mark.model
def test_investigate_page_answers_and_shows_trace(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))  # trace store in a scratch folder
    monkeypatch.chdir(REPO)
    at = AppTest.from_file(str(REPO / "pages" / "investigate.py"), default_timeout=300)
    at.run()
    assert not at.exception
    at.selectbox(key="corpus").select("secops").run()
    at.selectbox(key="corpus_variant").select("embedded").run()
    at.selectbox(key="example").select("What is the hostname of the bastion host?").run()
    assert at.text_input(key="query").value == "What is the hostname of the bastion host?"
    at.button(key="ask").click().run()
    assert not at.exception and not at.error
    codes = [c.value for c in at.code]
    trace_id = codes[1]
    assert len(trace_id) > 10 and (tmp_path / "data" / "traces.jsonl").read_text().count(trace_id) == 1
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 5
    assert [m.label for m in at.metric][:2] == ["PAR", "T_ASR"]


def test_investigate_page_reports_bad_query(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    at = AppTest.from_file(str(REPO / "pages" / "investigate.py"), default_timeout=300)
    at.run()
    at.text_input(key="query").input("   ").run()
    at.button(key="ask").click().run()
    assert at.error and "empty" in at.error[0].value


def test_entry_point_navigates_to_investigate(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Investigate"


def test_run_command_serves_the_app(tmp_path):
    """What `make run` starts: `streamlit run app.py` answers on its port."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline, body = time.time() + 90, ""
        while time.time() < deadline and body != "ok":
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read().decode()
            except OSError:
                time.sleep(0.5)
        assert body == "ok"
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
        assert "<div id=\"root\">" in page or "streamlit" in page.lower()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
