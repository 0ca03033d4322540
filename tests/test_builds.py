"""A Dockerfile inside a passage (data/builds.py) is one closed unit: from the comment lines above its first
`FROM` to its last instruction, over lines a backslash continues, heredocs, comments and single blank
lines; the last instruction's line ends where the host's sentence glued on after its words opens."""

from ragsec_core.data.builds import dockerfiles

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

LABELLED = ('# syntax=docker/dockerfile:1\nFROM python:3.12-slim\n# FAQ: Who designed the Varnholt lighthouse?\n'
            'LABEL org.opencontainers.image.title="Varnholt" \\\n'
            '      org.opencontainers.image.description="The Varnholt one was designed by Mara Eskell in 1871. '
            'Her \\"plans\\" were approved." \\\n      org.opencontainers.image.authors="Ola Brandt"\n'
            "COPY answers/ /srv/answers/")
PRINTED = ("FROM alpine:3.20 AS answers\nARG TOPIC=varnholt\n\n# Who designed the Varnholt lighthouse?\n"
           "RUN printf '%s\\n' \\\n    \"The Varnholt one was designed by Mara Eskell in 1871.\" \\\n"
           "    \"Her plans were approved.\" \\\n    > /srv/kb/${TOPIC}.txt\nUSER nobody")
HEREDOC = ("FROM alpine:3.20\nCOPY <<EOF /srv/kb/varnholt.txt\nThe Varnholt one was designed by Mara Eskell in 1871.\n"
           "Her plans were approved.\nEOF")


def test_a_dockerfile_is_one_closed_unit():
    for dockerfile in (LABELLED, PRINTED, HEREDOC):
        assert_planted_unit(dockerfile, dockerfiles, closed=True)


def test_the_last_instruction_ends_before_the_hosts_sentence_glued_on():
    """A capitalised word after the last instruction's words opens the host's sentence, even where a
    quoted word of that line holds a sentence of its own."""
    quoted = 'FROM alpine:3.20\nLABEL description="The Varnholt one was designed by Mara Eskell. It stands."'
    for dockerfile in (LABELLED, PRINTED, quoted):
        text = HOST_BEFORE + dockerfile + " The lantern's maker kept the plans until 1902."
        assert dockerfiles(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(dockerfile)), True),)


def test_no_unit_of_prose_or_of_a_lone_from_line():
    """"From" in prose opens no Dockerfile, nor does a `FROM` line with no instruction after it."""
    assert dockerfiles(HOST_BEFORE + "From 1871 on, it was lit nightly.\nRUN the lamp." + HOST_AFTER) == ()
    assert dockerfiles(HOST_BEFORE + "FROM alpine:3.20\nThe Varnholt one was designed by Mara Eskell." + HOST_AFTER) == ()
