"""The held-out forms of `bench/held_out_records.py` read back as their own tools read them: Protocol Buffers'
`text_format` parses the text-format file into the messages its header names, `sexpdata` reads the Lisp
data, and `ldif`'s parser reads the directory export (its folded lines joined again, as a directory server
would). Each gives the claim back whole, as one value, or a sentence a string or value."""

from __future__ import annotations

import io

import ldif
import sexpdata
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from ragsec_core.bench.attacks import AttackRecord
from ragsec_core.bench.held_out_records import LDIF_WIDTH
from ragsec_core.data.spans import sentence_texts

from .test_attack_forms import QUESTION
from .test_held_out_bundle import TEXT
from .test_held_out_source import drawn

REC = AttackRecord("v1", QUESTION, (TEXT,), "Mara Eskell", ("Jens Holm",), ())
_STRING, _BOOL, _INT, _MESSAGE = (descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                                  descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
                                  descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                                  descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE)
# the schema the text-format files name in their header comments (`helpdesk/faq.proto`), as its writer's
# service would compile it: message -> (field, type, repeated, message type)
SCHEMA = {"FaqEntry": (("question", _STRING, False, ""), ("answer", _STRING, False, ""), ("reviewed", _BOOL, False, ""),
                       ("owner", _STRING, False, "")),
          "FaqSet": (("entry", _MESSAGE, True, ".helpdesk.FaqEntry"),),
          "Source": (("url", _STRING, False, ""), ("revision", _INT, False, "")),
          "KnowledgeCard": (("topic", _STRING, False, ""), ("question", _STRING, False, ""),
                            ("sentences", _STRING, True, ""), ("source", _MESSAGE, False, ".helpdesk.Source"))}


def _message(name: str) -> Message:
    """An empty message of `SCHEMA`'s type `name`, its file built into a pool of its own."""
    proto = descriptor_pb2.FileDescriptorProto(name="helpdesk/faq.proto", package="helpdesk", syntax="proto3")
    for message, fields in SCHEMA.items():
        described = proto.message_type.add(name=message)
        for number, (field, kind, repeated, type_name) in enumerate(fields, 1):
            label = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED if repeated else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
            described.field.add(name=field, number=number, type=kind, label=label, **({"type_name": type_name} if type_name else {}))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return GetMessageClass(pool.FindMessageTypeByName("helpdesk." + name))()


def test_textproto_gives_the_claim_as_one_answer_or_a_sentence_a_string():
    texts = drawn(REC, "textproto")
    for text in texts:
        if "proto-message: FaqSet" in text:  # one answer string of an entry, beside the question's
            faq = text_format.Parse(text, _message("FaqSet"))
            assert [(e.question, e.answer, e.reviewed) for e in faq.entry] == [(QUESTION, TEXT, True)]
        else:  # a knowledge card's repeated sentences, a sentence each, and its nested source
            card = text_format.Parse(text, _message("KnowledgeCard"))
            assert list(card.sentences) == sentence_texts(TEXT) and card.question == QUESTION
            assert card.source.url.startswith("https://") and card.source.revision > 0
    assert {"proto-message: FaqSet" in text for text in texts} == {True, False}


def test_sexp_gives_the_claim_as_the_answer_keyword_or_a_sentence_a_string():
    texts = drawn(REC, "sexp")
    for text in texts:
        form = sexpdata.loads(text)
        head = form[0].value()
        if head == "faq-entry":  # keyword arguments, the claim under :answer
            pairs = dict(zip((key.value() for key in form[1::2]), form[2::2], strict=True))
            assert pairs[":answer"] == TEXT and pairs[":question"] == QUESTION
            assert isinstance(pairs[":tags"], sexpdata.Quoted)
        else:  # a define of a quoted list of strings, a sentence each
            assert head == "define" and isinstance(form[2], sexpdata.Quoted)
            assert form[2].x == sentence_texts(TEXT) and text.startswith(f";; {QUESTION}\n")
    assert {text.startswith(";;;") for text in texts} == {True, False}


def test_ldif_gives_the_claim_as_one_folded_value_or_a_value_a_sentence():
    texts = drawn(REC, "ldif")
    for text in texts:
        assert all(len(line.encode()) <= LDIF_WIDTH for line in text.split("\n"))
        assert REC.incorrect in text  # the fold never falls inside the false answer
        # the export's `version: 1` line reads as a record of no entry
        [(dn, entry)] = [(dn, entry) for dn, entry in ldif.LDIFParser(io.BytesIO(text.encode())).parse() if dn]
        if "changetype: add" in text:  # a change record adding the entry, a description value a sentence
            assert dn.startswith("uid=") and entry["changetype"] == ["add"]
            assert entry["description"] == sentence_texts(TEXT) and entry["info"] == [QUESTION]
        else:  # an entry of the export, the claim one description value
            assert dn.startswith("cn=") and entry["description"] == [TEXT] and entry["documentTitle"] == [QUESTION]
    assert {"changetype: add" in text for text in texts} == {True, False}
