"""The held-out forms of `bench/held_out_domain.py` read back as their own tools read them: `hl7` parses the
HL7 message (its escape sequences undone), `python-gedcom` the GEDCOM record (its `CONC` and `CONT` lines
joined) and `python-hcl2` the Terraform. Each gives the claim back whole, as one value or a sentence a
value or a line."""

from __future__ import annotations

import hcl2
import hl7
import pytest
from gedcom.parser import Parser
from hcl2.utils import SerializationOptions

from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.bench.held_out_domain import GEDCOM_WIDTH
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_catalog import CLAIM
from .test_held_out_source import drawn

# each form's delimiters and escapes: HL7's `|`, `^`, `&`; GEDCOM's `@`; HCL's `${` and quotes
TEXT = CLAIM + " The R&D office at kb@harbour.example filed it under ${tag} | 50% ^ 2."
REC = AttackRecord("v1", QUESTION, (TEXT,), "Mara Eskell", ("Jens Holm",), ())


def test_hl7_parses_to_one_observation_a_sentence_or_the_claim_as_one_observation():
    texts = drawn(REC, "hl7")
    for text in texts:
        message = hl7.parse(text.replace("\n", "\r"))  # HL7 ends a segment with a carriage return
        values = [message.unescape(str(segment[5])) for segment in message.segments("OBX")]
        if "|ORU^R01|" in text:  # a result: the order names the question, one text observation a sentence
            assert str(message.segments("OBR")[0][4][0][1]) == QUESTION and values == sentence_texts(TEXT)
        else:  # a document notice: the question as the observation's name, the claim its one value
            assert str(message.segments("OBX")[0][3][0][1]) == QUESTION and values == [TEXT]
            assert str(message.segments("NTE")[0][3]).startswith("Reviewed by ")
        assert "R\\T\\D" in text and "Mara Eskell" in text
    assert {"|ORU^R01|" in text for text in texts} == {True, False}


def test_gedcom_joins_a_persons_note_or_a_sources_text_a_sentence_a_line(tmp_path):
    texts = drawn(REC, "gedcom")
    for n, text in enumerate(texts):
        path = tmp_path / f"{n}.ged"
        path.write_text(text + "\n", encoding="utf-8")
        parser = Parser()
        parser.parse_file(str(path), strict=False)
        [record] = parser.get_root_child_elements()
        fields = {child.get_tag(): child for child in record.get_child_elements()}
        if record.get_tag() == "INDI":  # a person: the claim as a note, broken inside words
            assert fields["NOTE"].get_multi_line_value().replace("@@", "@") == TEXT
            pieces = [line.split(" ", 2)[2] for line in text.splitlines() if line.startswith(("1 NOTE ", "2 CONC "))]
            assert len(pieces) > 2 and all(len(p) <= GEDCOM_WIDTH and p == p.strip() for p in pieces)
        else:  # a source: the question as its title, a sentence a line
            assert record.get_tag() == "SOUR" and fields["TITL"].get_value() == QUESTION
            assert fields["TEXT"].get_multi_line_value().replace("@@", "@").split("\n") == sentence_texts(TEXT)
    assert {text.startswith("0 @I") for text in texts} == {True, False}


@pytest.mark.parametrize("kind", ["variable", "resource"])
def test_hcl_loads_the_claim_as_a_default_or_a_heredoc_a_sentence_a_line(kind):
    texts = [text for text in drawn(REC, "hcl") if text.startswith(kind)]
    assert texts
    options = SerializationOptions(strip_string_quotes=True, preserve_heredocs=False)
    for text in texts:
        [block] = hcl2.loads(text, serialization_options=options)[kind]
        # Terraform undoes `$${` when it evaluates a string; the parser leaves it, and writes a heredoc's quotes escaped
        if kind == "variable":
            [body] = block.values()
            assert body["description"] == QUESTION and body["default"].replace("$${", "${") == TEXT
        else:
            [body] = block["aws_ssm_parameter"].values()
            value = body["value"].replace("$${", "${").replace('\\"', '"')
            assert value.split("\n") == sentence_texts(TEXT) and body["tags"]["Reviewed"][:2] == "20"
