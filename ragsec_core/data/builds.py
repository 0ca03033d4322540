"""A container image's Dockerfile inside a passage, read as one unit.

A RAG system over a registry's or a repository's build files holds a Dockerfile as its writer laid it
out: comment lines and parser directives (`# syntax=…`) above a `FROM` line, then instructions, an
upper-case keyword each (`LABEL`, `RUN`, `COPY`, `USER`), continued over lines that end in a backslash,
a heredoc's lines (`<<EOF` … `EOF`) read to their marker, comments and single blank lines between. The
sentence split reads none of it: it cuts a label's value or a `RUN`'s quoted words at their full stops,
reads `FROM` and its image as words of the host's sentence that the planting glued on before it, and runs
the last instruction into the host's next sentence. So a Dockerfile, from the comment lines right above its
first `FROM` to its last instruction, is one closed unit; the last instruction's line ends where the
host's sentence glued on after it opens (`layout.value_end`), past any quoted value on it.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Unit, outermost
from ragsec_core.data.configs import heredoc_end
from ragsec_core.data.layout import MOST_LINES, line_end, line_start, opener_cut, value_end

_KEYWORDS = ("FROM|ARG|ENV|LABEL|RUN|COPY|ADD|WORKDIR|USER|EXPOSE|VOLUME|ENTRYPOINT|CMD|HEALTHCHECK|SHELL|"
             "STOPSIGNAL|ONBUILD|MAINTAINER")
_INSTRUCTION = re.compile(rf"(?:{_KEYWORDS})[ \t]+\S")
# the first `FROM` line (an image, maybe a stage's name) with the comment lines right above it
_FROM = re.compile(r"(?<!\S)(?:#[^\n]*\n){0,8}FROM[ \t]+(?:--platform=\S+[ \t]+)?[\w./:@${}-]+(?:[ \t]+AS[ \t]+[\w.-]+)?[ \t]*\n")
_HEREDOC = re.compile(r"<<-?([\"']?)([A-Za-z_]\w{0,30})\1")  # `RUN <<EOF`, `COPY <<"EOF" /x`
_CAPITAL_AFTER = re.compile(r"[ \t]+[\"\u201c]?[A-Z]")
_QUOTED = re.compile(r"""(?<![^\s=])(?:"(?:[^"\\\n]|\\.)*"|'[^'\n]*')""")  # a quoted word: a label's value, a RUN's word


def dockerfiles(text: str) -> tuple[Unit, ...]:
    """The text's Dockerfiles with an instruction after `FROM`, each closed: from the comment lines above
    `FROM` to the end of its last instruction (`_last_instruction`, `_instruction_end`)."""
    return outermost(_FROM, text, _dockerfile)


def _dockerfile(text: str, opener: re.Match[str]) -> Unit | None:
    """The Dockerfile that `opener` (its `FROM` line with the comments above) opens, or None."""
    last = _last_instruction(text, opener.end())
    return None if last is None else ((opener.start(), _instruction_end(text, last)), True)


def _last_instruction(text: str, i: int) -> int | None:
    """Where the last line of the last instruction after `i` starts: over instruction lines, the lines a
    backslash continues, heredocs, comments and single blank lines, to the first other line; None where no
    instruction follows."""
    last, continued, blanks = None, False, 0
    for _ in range(MOST_LINES):
        if i > len(text):
            break
        stop = line_end(text, i)
        line = text[i:stop]
        if not continued and not line.strip():
            blanks += 1
            if blanks > 1:
                break
        elif continued or _INSTRUCTION.match(line):
            last, continued, blanks = i, line.rstrip().endswith("\\"), 0
            if (heredoc := _HEREDOC.search(line)) is not None:
                stop = heredoc_end(text, stop + 1, heredoc.group(2)) - 1
                last = line_start(text, stop)
        elif line.lstrip().startswith("#"):
            blanks = 0
        else:
            break
        i = stop + 1
    return last


def _instruction_end(text: str, start: int) -> int:
    """Where the instruction line that starts at `start` ends: where the host's sentence glued on after its
    words opens (`opener_cut` between its quoted words, which hold sentences of their own: `_QUOTED`; a
    capitalised word right after its last quoted word), else at its line's end or the first sentence end
    after its last quoted word (`value_end`)."""
    i = start
    for quoted in _QUOTED.finditer(text, start, line_end(text, start)):
        if (cut := opener_cut(text, i, quoted.start(), quoted.start() - i)) is not None:
            return cut
        i = quoted.end()
    if i > start and _CAPITAL_AFTER.match(text, i):  # a capitalised word right after a quoted word: the host's
        return i
    return value_end(text, i)
