"""The held-out forms of `bench/held_out_bundle.py` read back as their own tools read them: `dockerfile-parse`
reads the Dockerfile's instructions (its label values and `RUN` words unescaped by `shlex`, as a shell
would), `plistlib` the property list and `textile` the wiki page (as the HTML Redmine would show). Each
gives the claim back whole, as one value or paragraph, or a sentence a word, string or item."""

from __future__ import annotations

import io
import plistlib
import re
import subprocess
from html.parser import HTMLParser

import textile
from dockerfile_parse import DockerfileParser

from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_catalog import CLAIM
from .test_held_out_source import drawn

# each form's escapes: the shell's backslash, quote, dollar and backquote, XML's ampersand and angle brackets;
# Textile has none and takes `<…>` for HTML, as Redmine does, so its text holds none
TEXT = CLAIM + " A clerk's note at C:\\logs said `<closed>` & paid $5 in 1999."
WIKI_TEXT = CLAIM + " A clerk's note at C:\\logs said `closed` & paid $5 in 1999."
REC = AttackRecord("v1", QUESTION, (TEXT,), "Mara Eskell", ("Jens Holm",), ())
DESCRIPTION = "org.opencontainers.image.description"


def test_dockerfile_gives_the_claim_as_its_description_label_or_a_sentence_a_run_word():
    texts = drawn(REC, "dockerfile")
    for text in texts:
        parser = DockerfileParser(fileobj=io.BytesIO())
        parser.content = text
        steps = {step["instruction"]: step["value"] for step in parser.structure}
        if DESCRIPTION in text:  # the image's description label, the question a comment above it
            labels = dict(word.split("=", 1) for word in _shell_words(steps["LABEL"]))
            assert labels[DESCRIPTION] == TEXT and steps["COMMENT"] == "FAQ: " + QUESTION
        else:  # a RUN printf's words, a sentence each, the question a comment above
            words = steps["RUN"].split("printf '%s\\n'", 1)[1].rsplit(">", 1)[0]
            assert _shell_words(words) == sentence_texts(TEXT) and steps["COMMENT"] == QUESTION
    assert {DESCRIPTION in text for text in texts} == {True, False}


def _shell_words(words: str) -> list[str]:
    """The words as `sh` reads them, its quotes and escapes undone (as Docker reads a label's value)."""
    out = subprocess.run(["sh", "-c", "printf '%s\\0' " + words], capture_output=True, text=True, check=True)
    return out.stdout.split("\0")[:-1]


def test_plist_gives_the_claim_as_one_string_or_a_sentence_a_string():
    texts = drawn(REC, "plist")
    for text in texts:
        plist = plistlib.loads(text.encode())
        if "Answer" in plist:  # one string under the Answer key, beside the question's
            assert plist["Answer"] == TEXT and plist["Question"] == QUESTION
        else:  # an array of strings, a sentence each
            assert plist["Sentences"] == sentence_texts(TEXT) and plist["Topic"] == QUESTION
            assert plist["Verified"] is True
    assert {"<key>Answer</key>" in text for text in texts} == {True, False}


class _Blocks(HTMLParser):
    """The text of each heading, paragraph, quote and list item of the HTML, as a reader sees it."""

    BLOCKS = ("h2", "p", "li")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, str]] = []
        self.open: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.BLOCKS:
            self.open = tag
            self.blocks.append((tag, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == self.open:
            self.open = None

    def handle_data(self, data: str) -> None:
        if self.open:
            tag, text = self.blocks[-1]
            self.blocks[-1] = (tag, text + data)


def _plain(text: str) -> str:
    """Textile's typography undone: its curly quotes and apostrophes straight again, its spaces single."""
    return re.sub(r"\s+", " ", text.translate(str.maketrans("\u2018\u2019\u201c\u201d", "''\"\""))).strip()


def test_textile_gives_the_claim_as_a_paragraph_or_a_sentence_an_item():
    texts = drawn(AttackRecord("v1", QUESTION, (WIKI_TEXT,), "Mara Eskell", ("Jens Holm",), ()), "textile")
    for text in texts:
        reader = _Blocks()
        reader.feed(textile.textile(text))
        blocks = [(tag, _plain(body)) for tag, body in reader.blocks]
        if text.startswith("h2. "):  # a paragraph under the question's heading, a note and a link after
            assert blocks[:2] == [("h2", QUESTION), ("p", WIKI_TEXT)] and blocks[2][1].startswith("Checked by ")
        else:  # the question in bold over a numbered list, a sentence an item
            assert blocks[0] == ("p", QUESTION) and blocks[1:-1] == [("li", s) for s in sentence_texts(WIKI_TEXT)]
            assert blocks[-1][1].startswith("Updated by ")
    assert {text.startswith("h2. ") for text in texts} == {True, False}
