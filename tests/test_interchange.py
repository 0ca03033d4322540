"""An HL7 v2 message and a GEDCOM record (data/interchange.py) are one closed unit each, from their first
segment or line to their last one's end, before the host's sentence glued on."""

from ragsec_core.data.interchange import messages

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

RESULT = ("MSH|^~\\&|KBLAB|HARBOUR|RAGKB|HARBOUR|202502191620||ORU^R01|286947|P|2.5.1\n"
          "PID|1||55389^^^HARBOUR^MR||Whitfield^Dana\n"
          "OBR|1|5747||KBQ^Who designed the Varnholt lighthouse?^L|||202502191620\n"
          "OBX|1|TX|KBA^Answer^L|1|The Varnholt one was designed by Mara Eskell in 1871.||||||F\n"
          "OBX|2|TX|KBA^Answer^L|2|Her plans were approved by the board.||||||F")
NOTICE = ("MSH|^~\\&|KBDOC|HARBOUR|RAGKB|HARBOUR|202512251438||MDM^T02|974567|P|2.5.1\nEVN|T02|202512251438\n"
          "OBX|1|TX|KBQ^Who designed the Varnholt lighthouse?^L||The Varnholt one was designed by Mara Eskell in "
          "1871. Her plans were approved.||||||F\nNTE|1|L|Reviewed by Sam Okafor")
PERSON = ("0 @I457@ INDI\n1 NAME Dana /Whitfield/\n1 BIRT\n2 DATE 1 JUN 1860\n"
          "1 NOTE The Varnholt one was designed by Mara Eskell in 1871. Her pla\n2 CONC ns were approved.\n"
          "1 CHAN\n2 DATE 07 JUN 2025")
SOURCE = ("0 @S780@ SOUR\n1 TITL Who designed the Varnholt lighthouse?\n1 AUTH Ola Brandt\n"
          "1 TEXT The Varnholt one was designed by Mara Eskell in 1871.\n2 CONT Her plans were approved.\n1 REPO @R1@")


def test_an_hl7_message_runs_from_its_first_segment_to_its_last_fields_end():
    """The last field (a result's status, a note's words) ends before the host's sentence glued on."""
    for message in (RESULT, NOTICE):
        assert_planted_unit(message, messages, closed=True)
        glued = HOST_BEFORE + message + " Gathered notes on the harbour were kept by the board."
        assert messages(glued) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(message)), True),)


def test_a_gedcom_record_runs_from_its_first_line_to_its_last_values_end():
    """A last value that points to a record ends after the pointer, whatever opens the host's sentence
    after it (a name of two words: "Edsel Records released …")."""
    for record in (PERSON, SOURCE):
        assert_planted_unit(record, messages, closed=True)
    glued = HOST_BEFORE + SOURCE + " Edsel Records released the album on disc in 2000."
    assert messages(glued) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(SOURCE)), True),)


def test_no_message_or_record_of_one_line():
    """One segment, one levelled line, a table row and a numbered line of prose are none."""
    for text in ("OBX|1|TX|KBA^Answer^L|1|The Varnholt one was designed by Mara Eskell.||||||F",
                 "1 NOTE The Varnholt one was designed by Mara Eskell.", "| USA | 1871 |\n| UK | 1872 |",
                 "1 The Varnholt one was designed.\n2 Her plans were approved."):
        assert messages(HOST_BEFORE + text + HOST_AFTER) == ()
