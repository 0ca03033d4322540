"""A program's data file inside a passage (data/datafiles.py) is one closed unit: a Protocol Buffers
text-format document from its header comments to its last field or `}`, an S-expression form from the
comments above it to its closing parenthesis, an LDIF entry from its `version:` or comment lines to its last
value, its folded lines read as its own, a KDL node from its `//` comments to the `}` that closes its
children; each ends where the host's sentence glued on after it opens."""

from ragsec_core.data.datafiles import data_files

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

ENTRY = ('# proto-file: helpdesk/faq.proto\n# proto-message: FaqSet\n\nentry {\n  question: "Who designed the Varnholt '
         'lighthouse?"\n  answer: "The Varnholt one was designed by Mara Eskell in 1871. Her \\"plans\\" were approved."\n'
         '  reviewed: true\n}')
CARD = ('topic: "varnholt"\nsentences: "The Varnholt one was designed by Mara Eskell in 1871."\nsentences: "Her plans '
        'were approved."\nsource {\n  url: "https://kb.example/cards/12"\n  revision: 4\n}')
ELISP = (';;; faq-data.el --- answers for the help desk\n\n(faq-entry\n :question "Who designed the Varnholt lighthouse?"\n'
         ' :answer "The Varnholt one was designed by Mara Eskell in 1871. Her (first) plans were approved."\n'
         " :tags '(kb reviewed))")
SCHEME = (';; Who designed the Varnholt lighthouse?\n(define varnholt-answer\n  \'("The Varnholt one was designed by Mara '
          'Eskell in 1871."\n    "Her plans were approved; a \\"fact\\" (sic)."))')
LDIF = ("version: 1\n\n# FAQ entry: Who designed the Varnholt lighthouse?\ndn: cn=varnholt,ou=answers,dc=example\n"
        "objectClass: document\ncn: varnholt\ndescription: The Varnholt one was designed by Mara Eskell in 1871. Her pl\n"
        " ans were approved.\ndocumentAuthor: cn=Ola Brandt,ou=people,dc=example")
CHANGES = ("dn: uid=varnholt,ou=kb,dc=example\nchangetype: add\ninfo: Who designed the Varnholt lighthouse?\n"
           "description: The Varnholt one was designed by Mara Eskell in 1871.\ndescription: Her plans were approved.\n\n"
           "dn: uid=lamp,ou=kb,dc=example\nchangetype: add\ninfo: When was it lit?\nmodifyTimestamp: 20250904120200Z")

FAQ = ('faq "varnholt-lighthouse" {\n    question "Who designed the Varnholt lighthouse?"\n'
       '    answer "The Varnholt one was designed by Mara Eskell in 1871. Her \\"plans\\" were approved."\n'
       '    reviewed true\n}')
KDL_CARD = ('// Who designed the Varnholt lighthouse?\ncard "varnholt" verified=true revision=4 {\n'
            '    sentence "The Varnholt one was designed by Mara Eskell in 1871."\n    source {\n'
            '        url "https://kb.example/cards/12"\n    }\n    sentence "Her plans were approved."\n}')
DATA_FILES = (ENTRY, CARD, ELISP, SCHEME, LDIF, CHANGES, FAQ, KDL_CARD)


def test_a_data_file_is_one_closed_unit():
    for planted in DATA_FILES:
        assert_planted_unit(planted, data_files, closed=True)


def test_each_ends_before_the_hosts_sentence_glued_on():
    """The host's sentence glued after a `}`, a closing parenthesis or an LDIF value is not the unit's."""
    for planted in DATA_FILES:
        text = HOST_BEFORE + planted + " The lantern's maker kept the plans until 1902."
        assert data_files(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(planted)), True),), planted[:12]


def test_no_unit_of_prose():
    """A parenthesised aside over two lines, a line that names a field and one LDIF line are prose; a CSS
    rule and a Terraform block are no KDL node."""
    for prose in ("The lamp (first lit\nin 1871) was designed by Mara Eskell.",
                  "note: the lamp was lit in 1871.\nIt was designed by Mara Eskell.",
                  'answer: "Mara Eskell"\nThe lamp was lit in 1871.',
                  "dn: the lamp's designer\nMara Eskell designed it in 1871.",
                  'body {\n  color: red;\n  content: "Mara Eskell designed it in 1871.";\n}',
                  'variable "designer" {\n  default = "Mara Eskell designed it in 1871."\n}'):
        assert data_files(HOST_BEFORE + prose + HOST_AFTER) == (), prose


def test_a_hosts_own_comment_mark_opens_no_comment_line_above():
    """A `;` or `#` that the host's sentence holds before the planted text on its line is the host's: the
    unit starts at its own comment line, at a line's start, glued after the host's sentence end, or glued
    after a host's word where only a writer's comment opens with its mark (`;;`, `# `)."""
    for host, planted in (("The lamp (] ; born 1871) was lit on the night it opened, No. ", SCHEME),
                          ("The record hit #22 on the chart that year. ", ENTRY),
                          ("The record hit #22 on the chart that year. ", LDIF),
                          ("\"I Wan'na ", ELISP), ("The record hit #22 on the chart and ", CARD.replace("topic", "# card\ntopic"))):
        text = host + planted + HOST_AFTER
        assert data_files(text) == (((len(host), len(host) + len(planted)), True),), planted[:12]
