"""Regenerate the README screenshots of the Investigate, Traceback and Guided demo pages.

    python docs/screenshots.py            # needs Chromium (/usr/bin/chromium) and playwright, like the e2e test

Drives the real app in headless Chromium through the same harness as the browser tests.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import browser_page, serve_app  # noqa: E402 (after the sys.path entry above)

OUT = ROOT / "docs" / "img"
BASTION = "What is the hostname of the bastion host?"


def _select(page, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_label(label).click()
    page.get_by_role("option", name=option, exact=True).click()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, serve_app(Path(tmp), timeout=180) as url, browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 2400})
        page.goto(url)
        page.get_by_text("Investigate", exact=True).first.wait_for(timeout=60_000)
        _select(page, "Corpus", "secops")
        _select(page, "Poisoned variant", "embedded")
        q = page.get_by_label("Query", exact=True)
        q.fill(BASTION)
        q.press("Enter")
        page.get_by_role("button", name="Ask").click()
        page.get_by_text("Token-level attention from the answer").wait_for(timeout=600_000)
        page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=60_000)
        page.wait_for_timeout(5000)
        page.screenshot(path=str(OUT / "investigate.png"))
        page.get_by_role("button", name="Trace back this answer →").click()
        page.get_by_role("button", name="Run Pass-1").click()
        page.locator("mark.rs-causal").first.wait_for(state="visible", timeout=600_000)
        page.get_by_role("button", name="Remove traced span and re-ask").click()
        page.get_by_text("Answer after remediation").wait_for(timeout=600_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(OUT / "traceback.png"))
        page.get_by_role("link", name="Guided demo").click()
        heads = ["1 · Clean answer", "2 · Inject poison", "3 · Poisoned answer", "4 · Attention collapse",
                 "5 · Traceback", "6 · Remediation"]
        for head in heads:
            page.get_by_role("button", name="Next:").first.click()
            page.get_by_text(head, exact=True).wait_for(timeout=600_000)
        page.set_viewport_size({"width": 1280, "height": 3200})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(OUT / "demo.png"))
    print(f"wrote {OUT}/investigate.png, traceback.png, demo.png")


if __name__ == "__main__":
    main()
