"""End to end in a real browser: `streamlit run app.py`, headless Debian Chromium, a poisoned demo query,
then the traceback page; the poisoned answer and the highlighted causal span must be visible."""

from __future__ import annotations

from .browser import RequestLog, browser_page, serve_app

BASTION = "What is the hostname of the bastion host?"


def _select(page, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_label(label).click()
    page.get_by_role("option", name=option, exact=True).click()


def test_poisoned_answer_and_traced_span_visible_in_chromium(tmp_path):
    log = RequestLog()
    with serve_app(tmp_path) as url, browser_page(log) as page:
        page.set_viewport_size({"width": 1280, "height": 1000})
        page.goto(url)
        page.get_by_text("Investigate", exact=True).first.wait_for(timeout=60_000)
        _no_deploy_button(page)
        _select(page, "Corpus", "secops")
        _select(page, "Poisoned variant", "embedded")
        page.get_by_text("Attention analysis (D-SCAN)").click()  # off: this test is about the traceback
        query = page.get_by_label("Query", exact=True)
        query.fill(BASTION)
        query.press("Enter")
        page.get_by_role("button", name="Ask").click()
        page.get_by_text("gate02.northwind.example").first.wait_for(timeout=240_000)
        page.screenshot(path=str(tmp_path / "investigate.png"), full_page=True)

        page.get_by_role("button", name="Trace back this answer →").click()
        page.get_by_role("button", name="Run Pass-1").click()
        causal = page.locator("mark.rs-causal").first
        causal.wait_for(state="visible", timeout=300_000)
        assert "gate02" in causal.inner_text()
        page.screenshot(path=str(tmp_path / "traceback.png"), full_page=True)

        assert (tmp_path / "traceback.png").stat().st_size > 10_000
        assert not log.external(), log.external()
        assert not page.ragsec_errors, page.ragsec_errors


def _no_deploy_button(page) -> None:  # type: ignore[no-untyped-def]
    """`client.toolbarMode = "viewer"` (.streamlit/config.toml): a local tool offers no Deploy button, even on
    localhost where Streamlit's default ("auto") shows the developer options."""
    page.locator('[data-testid="stToolbar"]').wait_for(state="attached", timeout=30_000)  # the toolbar is drawn
    assert page.get_by_role("button", name="Deploy").count() == 0
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0


def test_deep_link_on_a_fresh_server_goes_through_the_navigation(tmp_path):
    """A `pages/` folder makes Streamlit start in its old pages-directory mode; the first request of a fresh
    server to `/traceback` must still get app.py's six-page navigation (and app.py's page config), not the raw
    files of `pages/`."""
    with serve_app(tmp_path) as url, browser_page() as page:
        page.goto(f"{url}/traceback")
        page.locator("h1").first.wait_for(timeout=60_000)
        page.wait_for_timeout(2000)
        nav = [t.split("\n")[-1] for t in page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()]
        assert page.locator("h1").first.inner_text() == "Traceback"
        assert nav == ["Investigate", "Traceback", "Retrieval lab", "Corpus monitor", "Benchmarks", "Guided demo"]
        assert page.title() == "ragsec"  # app.py's st.set_page_config ran
        assert page.url.endswith("/traceback")
        _no_deploy_button(page)
