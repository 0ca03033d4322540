"""The artifact's reading aids for views, on hand-built results (no model): the caveat an analyst sees when
the event string is named in the question itself (a comparison question's two names), where masking its
mentions is weak evidence of a planted claim."""

from __future__ import annotations

from dataclasses import replace

from pytest import CaptureFixture

from ragsec_core._util.text import html_visible
from ragsec_core.cli.display import print_pass1
from ragsec_core.traceback.artifact import QUESTION_CAVEAT, Artifact, named_in_question
from ragsec_core.traceback.result import Round, TracebackResult
from ragsec_core.views.report import report_html

from .test_boundary import _trace, _whole

COMPARISON = "Which port did Orsin reach first, Quillon & Co or Pella?"


def _result(anchor: str, query: str) -> tuple[Artifact, TracebackResult]:
    trace = replace(_trace(), query=query)
    rnd = Round(0, "Orsin reached Quillon & Co.", anchor, "fast_path", [_whole(trace, 0)], [_whole(trace, 0)],
                "Orsin reached Pella.", True, None, [0])
    res = TracebackResult(trace.trace_id, "PAR", "event", "delete", True, rounds=[rnd, replace(rnd, index=1)])
    return Artifact(trace, res), res


def test_an_event_string_the_question_names_is_flagged_once() -> None:
    art, res = _result("Quillon & Co", COMPARISON)
    assert named_in_question(art.trace, res) == ["Quillon & Co"]
    # a name the question does not carry, or carries only inside another word, is not flagged
    for anchor, query in (("Quillon", "Where did Orsin sail after leaving Pella?"), ("Pel", COMPARISON)):
        other, other_res = _result(anchor, query)
        assert named_in_question(other.trace, other_res) == []


def test_the_report_and_the_cli_state_the_caveat_with_the_name_escaped(capsys: CaptureFixture[str]) -> None:
    art, res = _result("Quillon & Co", COMPARISON)
    html = report_html(art)
    assert "Caveat" in html and "Quillon &amp; Co" in html and "Quillon & Co" not in html
    print_pass1(res, art.trace)
    assert f"Caveat: {QUESTION_CAVEAT} Named: 'Quillon & Co'" in capsys.readouterr().out
    plain, plain_res = _result("Quillon", "Where did Orsin sail after leaving Pella?")
    assert "Caveat" not in report_html(plain)
    print_pass1(plain_res, plain.trace)
    assert "Caveat" not in capsys.readouterr().out


def test_the_traceback_page_warns_and_shows_the_name_as_plain_text(tmp_path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from .conftest import REPO

    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    art, _ = _result("**Quillon** & Co", "Which port did Orsin reach first, **Quillon** & Co or Pella?")
    at = AppTest.from_file(str(REPO / "pages" / "traceback.py"), default_timeout=120)
    at.session_state["tb_trace"] = art.trace
    at.session_state["tb_artifact"] = art
    at.run()
    assert not at.exception
    assert [w.value for w in at.warning if w.value == QUESTION_CAVEAT]
    assert "**Quillon** & Co" in [c.value for c in at.code]  # verbatim, not rendered as markdown


def test_each_reported_chunk_says_why_in_the_report_the_cli_and_the_page(capsys: CaptureFixture[str], tmp_path,
                                                                          monkeypatch) -> None:
    """A copy reported by its likeness to the other copies, not because the event needed it: the analyst must
    be able to tell that from a causal finding, wherever the result is read."""
    from streamlit.testing.v1 import AppTest

    from ragsec_core.traceback.boundary import REASONS

    from .conftest import REPO

    art, res = _result("Quillon", "Where did Orsin sail after leaving Pella?")
    rnd = replace(res.rounds[0], attribution=[replace(_whole(art.trace, 0), reason="alike")])
    res = replace(res, rounds=[rnd], attribution=rnd.attribution, causal=[_whole(art.trace, 1)])
    art = Artifact(art.trace, res)
    assert html_visible(REASONS["alike"]) in report_html(art)
    print_pass1(res, art.trace)
    assert f"reported by {REASONS['alike']}" in capsys.readouterr().out
    monkeypatch.setenv("RAGSEC_HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    at = AppTest.from_file(str(REPO / "pages" / "traceback.py"), default_timeout=120)
    at.session_state["tb_trace"] = art.trace
    at.session_state["tb_artifact"] = art
    at.run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert f"Chunk #1 · reported by {REASONS['alike']}" in captions
    assert "Chunk #2 · masked, not reported" in captions  # in the causal set only
