"""Issue-tracker tickets inside a passage (data/tickets.py): an export from its keyed title to its footer,
a web issue from its title over its body to its labels, each closed; without either, open."""

from ragsec_core.data.tickets import tickets

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

FIELDS = ("[KB-370] Check the answer: Designed Varnholt Lighthouse\nKey: KB-370\nStatus: Resolved   Priority: Minor\n"
          "Reporter: Sam Okafor\nCreated: 01/Jun/24 04:11 AM\n\nDescription:\nHarbour towers were often designed "
          "abroad. The\nVarnholt one was designed by Mara Eskell in 1871.")
EXPORTED = FIELDS + "\n\n--\nThis message was sent by the issue tracker (kb.example.org)."
WEB = ("Who designed the Varnholt lighthouse? #364\nOpen \u00b7 dana opened this issue on Jul 19, 2024 \u00b7 3 comments\n\n"
       "Harbour towers were often designed abroad. The Varnholt one was designed by Mara Eskell in 1871.\n\n"
       "Labels: question, kb-answers")


def test_a_ticket_runs_from_its_title_to_its_footer_or_its_labels():
    """The footer's sentence closes an export; the labels' line is cut before "Its lantern …", glued on;
    a web issue's title starts after the host's last sentence end on its line."""
    assert_planted_unit(EXPORTED, tickets, closed=True)
    assert_planted_unit(WEB, tickets, closed=True)
    assert_planted_unit(FIELDS, tickets, closed=False)


def test_a_bracketed_key_without_fields_or_a_number_without_a_status_line_is_none():
    assert tickets(HOST_BEFORE + "[KB-370] was closed.\nThe tower stands." + HOST_AFTER) == ()
    assert tickets("The lighthouse is listed as #364\nin the register of the harbour.") == ()
