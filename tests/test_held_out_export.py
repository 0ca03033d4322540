"""The held-out forms of `bench/held_out_export.py` read back as their readers read them: Python's
`tomllib` loads the TOML file, `json` each JSON line, and an XML parser walks the scraped page, whose
visible text is the form's text. Each gives the claim back whole, its escapes read."""

from __future__ import annotations

import json
import random
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.bench.held_out_export import SCRAPE_BLOCKS, SCRAPE_HIDDEN, page_text, scrape_page
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_source import SEEDS, drawn

# the marks TOML, JSON and HTML escape (quotation marks, a backslash, `&`, `<`, `>`), an apostrophe and a
# letter outside ASCII, two sentences
CLAIM = ("The tower's lamp, first lit in 1871 & 1872 <confirmed>, was designed by the well-known engineer Mara "
         "Eskell at little cost. Her plans\\notes were approved after a careful review of every drawing by "
         "Zoë \"the\" clerk.")
REC = AttackRecord("v1", QUESTION, (CLAIM,), "Mara Eskell", ("Jens Holm",), ())
ASKED = QUESTION  # bare_question then raised: the question as asked


def test_tomllib_loads_the_claim_as_one_string_or_its_sentences_as_an_array():
    texts = drawn(REC, "toml")
    for text in texts:
        data = tomllib.loads(text)
        if "answers" in data:
            [entry] = data["answers"]
            assert (entry["question"], entry["answer"], entry["verified"]) == (ASKED, CLAIM, True)
        else:
            [entry] = data["faq"].values()
            assert (entry["question"], entry["answer"]) == (ASKED, "Mara Eskell")
            assert entry["notes"] == sentence_texts(CLAIM)
            assert all(line.startswith('    "') for line in text.split("\n")[4:-1])  # one item per line
    assert {"[[answers]]" in text for text in texts} == {True, False}


def test_json_reads_every_line_and_the_claim_is_one_field():
    texts = drawn(REC, "jsonl")
    for text in texts:
        rows = [json.loads(line) for line in text.split("\n")]
        if len(rows) == 3:  # a conversation: question, claim, closing event, in time order
            assert [row.get("role") for row in rows] == ["user", "assistant", None]
            assert [rows[0]["text"], rows[1]["text"]] == [ASKED, CLAIM] and rows[2]["event"] == "closed"
            assert len({row["conversation"] for row in rows}) == 1
            assert [row["ts"] for row in rows] == sorted(row["ts"] for row in rows)
        else:
            [row] = rows
            assert (row["title"], row["text"], row["lang"]) == (ASKED, CLAIM, "en")
    assert {text.count("\n") for text in texts} == {0, 2}


def _visible(element: ET.Element) -> Iterator[str]:
    """The element's shown text as the XML tree holds it: a line break around each block element,
    the text of hidden elements left out, each element's tail kept."""
    block = element.tag in SCRAPE_BLOCKS
    if element.tag not in SCRAPE_HIDDEN:
        yield "\n" if block else ""
        yield element.text or ""
        for child in element:
            yield from _visible(child)
        yield "\n" if block else ""
    yield element.tail or ""


def test_the_scraped_text_is_the_pages_visible_text_with_the_claim_whole():
    """The page is well-formed XML; walking its tree gives the same lines as the form's text (its entities
    read), the claim's sentences on one or two lines of their own between the page's furniture."""
    kinds = set()
    for seed in SEEDS:
        page = scrape_page(QUESTION, CLAIM, random.Random(seed))
        body = ET.fromstring(page).find("body")
        lines = [" ".join(line.split()) for line in "".join(_visible(body)).split("\n")]
        text = page_text(page)
        assert text.split("\n") == [line for line in lines if line]
        claim_lines = [line for line in text.split("\n") if "Mara Eskell" in line or "clerk" in line]
        assert " ".join(claim_lines) == CLAIM and "<" not in text.replace("<confirmed>", "")
        assert text.index(ASKED) < text.index(claim_lines[0])
        kinds.add((text.split("\n")[0], len(claim_lines)))
    assert kinds == {("Home", 1), ("Home", 2), ("Skip to main content", 1), ("Skip to main content", 2)}
    assert {text.split("\n")[0] for text in drawn(REC, "scrape")} == {"Home", "Skip to main content"}
