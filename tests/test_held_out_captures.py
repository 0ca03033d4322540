"""The held-out forms of `bench/held_out_captures.py` read back as their own tools read them: `webvtt-py`
parses the caption file (its tags and character references undone, as a player shows the text), `vobject`
the vCard (its escapes undone and its folds joined) and the standard library's `http.client` the raw
response (`curl -v`'s print read as its marks say). Each gives the claim back whole, as one note or body,
or a sentence a cue, note or line."""

from __future__ import annotations

import html
import io
from email.parser import Parser
from http.client import HTTPResponse

import vobject
import webvtt

from ragsec_core.bench.held_out_captures import VCARD_OCTETS, VTT_SETTINGS, VTT_WIDTHS
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_bundle import TEXT
from .test_held_out_records import REC
from .test_held_out_source import drawn


def test_vtt_gives_the_question_then_a_sentence_a_cue():
    texts = drawn(REC, "vtt")
    for text in texts:
        whole = text.startswith("WEBVTT")
        captions = webvtt.from_string(text if whole else "WEBVTT\n\n" + text).captions  # an excerpt has no header
        shown = [html.unescape(cue.text).replace("\n", " ") for cue in captions]
        if whole:  # numbered cues: the question in italics, then a sentence a cue in the guest's voice
            assert shown == [QUESTION, *sentence_texts(TEXT)] and captions[0].raw_text == f"<i>{QUESTION}</i>"
            assert [cue.identifier for cue in captions] == [str(k) for k in range(1, len(captions) + 1)]
            assert {cue.voice for cue in captions[1:]} == {"Guest"}
        else:  # cues alone, cue settings on each time line
            assert shown == sentence_texts(TEXT) and all(cue.identifier is None for cue in captions)
            assert text.count(VTT_SETTINGS) == len(captions)
        width = VTT_WIDTHS[0 if whole else 1]
        lines = [line for cue in captions[1 if whole else 0 :] for line in html.unescape(cue.text).split("\n")]
        assert max(len(line) for line in lines if "Mara Eskell" not in line) <= width + len("<v Guest>")
        assert all(a.end < b.start for a, b in zip(captions, captions[1:]))  # HH:MM:SS.mmm sorts as it reads
    assert {text.startswith("WEBVTT") for text in texts} == {True, False}


def test_vcard_gives_the_claim_as_one_note_or_a_note_a_sentence():
    texts = drawn(REC, "vcard")
    for text in texts:
        card = vobject.readOne(text)
        notes = [note.value for note in card.contents["note"]]
        if card.version.value == "3.0":  # one note: the question, a line break, the claim
            assert notes == [f"{QUESTION}\n{TEXT}"] and card.fn.value and card.email.value
        else:  # an organisation's card: the question in an X- property, a note a sentence
            assert notes == sentence_texts(TEXT) and card.contents["x-faq-question"][0].value == QUESTION
        assert max(len(line.encode()) for line in text.split("\n")) <= VCARD_OCTETS
        assert "Mara Eskell" in text  # never folded inside
    assert {vobject.readOne(text).version.value for text in texts} == {"3.0", "4.0"}


class _Capture(io.BytesIO):
    """A captured response as a socket `http.client` can read from."""

    def makefile(self, *args: object, **kwargs: object) -> _Capture:
        return self


def test_http_gives_the_claim_as_the_body_the_headers_announce():
    texts = drawn(REC, "http")
    for text in texts:
        if text.startswith("HTTP/1.1"):  # a raw response: the question, a blank line, the claim
            response = HTTPResponse(_Capture(text.encode()))  # type: ignore[arg-type]  # it reads bare \n line ends too
            response.begin()
            body = response.read().decode()
            assert response.status == 200 and response.getheader("Content-Type").startswith("text/plain")
            assert body == f"{QUESTION}\n\n{TEXT}"
        else:  # curl -v: the request behind `>`, the response's head behind `<`, then the body, a sentence a line
            lines = text.split("\n")
            head = [line[2:] for line in lines if line.startswith("< ")]
            blank = lines.index("<")
            body = "\n".join(lines[blank + 1 : -1]) + "\n"
            assert head[0] == "HTTP/2 200" and lines[-1].startswith("* Connection #0")
            headers = Parser().parsestr("\n".join(head[1:]) + "\n\n")
            assert int(headers["content-length"]) == len(body.encode()) and body.splitlines() == sentence_texts(TEXT)
            assert [line.split()[2] for line in lines if line.startswith("> GET")] == ["/answers/designed-varnholt-lighthouse"]
    assert {text.startswith("HTTP/1.1") for text in texts} == {True, False}
