"""INI sections and resource bundles inside a passage, read as units: the comments above a section's header,
the header, and its lines of keys, values, continuations and comments.

A RAG system that indexes a project's or an application's files holds configuration as its tools wrote it:
a `[section]` header, `key = value` lines, a value continued on indented lines, comment lines (`;`, `#`)
anywhere, an exporting tool's comment above the header. The sentence split reads the header as the last
word of the host's sentence before it, cuts a comment block at its full stops and runs the last value into
the host's next sentence. So a section with at least one key is one unit, from the comments right above
its header to its last line. A value has no sentence end to stop at: the last line ends before the first
capitalised word that opens a sentence (a clause opener, or a name a lower-case word follows:
`layout.opener_cut`), as a poem's last line does, where the planting glued the host's next sentence on.
TOML is read by the same rules: its `[[array]]` table header is a header, an array whose items run over
indented lines ends at its closing `]` line, and an exporting tool's comment may stand one blank line above
the header. A Java `.properties` bundle has no header: two or more lines of dotted keys in a row are one
unit (`bundles`), a value continued over a line that ends in a backslash; its values are prose. A
Terraform block as `terraform fmt` writes it (`resource "aws_ssm_parameter" "x" {`, its body indented, a
heredoc's lines too, `}` at the opener's own indent) is one unit that its closing brace ends (`blocks`).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span, Unit, outermost
from ragsec_core.data.layout import MOST_LINES, first_end, line_end, line_start, opener_cut, raised_opener_cut

_HEADER = re.compile(r"(?<!\S)\[(\[)?[A-Za-z0-9_][^\[\]\n]{0,60}\](?(1)\])[ \t]*\n")  # TOML's `[[answers]]` too
_KEY = re.compile(r"[A-Za-z_][\w.:-]{0,60}[ \t]*=[ \t]*\S")
_COMMENT = re.compile(r"[;#][ \t]")
_CONTINUED = re.compile(r"[ \t]+\S")
_ARRAY_OPEN = re.compile(r"=[ \t]*\[[ \t]*$")  # a key's line whose value, an array, runs on below
_ARRAY_CLOSE = re.compile(r"[ \t]*\]")  # the line that closes it
_COMMENT_START = re.compile(r"(?m)(?:^|(?<=[.!?\]\"')][ \t]))[;#](?:[ \t]|(?=[A-Z]))")  # a stored bundle's "#Thu …"
# a bundle's first key line: a dotted key and `=` at a line's start or glued after the host's sentence end
_BUNDLE_KEY = re.compile(r"(?m)(?:^|(?<=[.!?\"')][ \t]))[A-Za-z_][\w-]*(?:\.[\w-]+)+[ \t]*=")
_BUNDLE_LEAST = 2
_MOST_ABOVE = 3  # comment lines above a header read as its section's
# an HCL block's opening line: its type, up to two quoted labels and `{` (glued after the host's sentence too);
# one with a label (`resource "…" "…" {`, `variable "…" {`) opens a block glued to the host's full stop (`glue`)
_BLOCK_TYPE, _BLOCK_LABEL, _BLOCK_BRACE = r"[a-z][a-z0-9_]{0,40}", r'[ \t]+"[^"\n]{1,80}"', r"[ \t]*\{[ \t]*\n"
LABELLED_BLOCK = rf"{_BLOCK_TYPE}(?:{_BLOCK_LABEL}){{1,2}}{_BLOCK_BRACE}"
_BLOCK_OPEN = re.compile(rf"(?<!\S){_BLOCK_TYPE}(?:{_BLOCK_LABEL}){{0,2}}{_BLOCK_BRACE}")
_ATTRIBUTE = re.compile(r"[ \t]+[A-Za-z_][\w-]{0,60}[ \t]*=")  # an indented `key =` line of its body
_HEREDOC = re.compile(r"<<-?([A-Za-z_]\w{0,30})[ \t]*$")  # `value = <<EOT` ending its line: lines to `EOT` are its text


def sections(text: str) -> tuple[tuple[Span, bool], ...]:
    """The INI sections of the text that hold a key, each closed (`_last_end` ends its last line): from the
    comment lines right above the header (`_above`) to the end of its last key, continuation or comment
    line; then the bundles outside them (`bundles`)."""
    found: list[tuple[Span, bool]] = []
    for m in _HEADER.finditer(text):
        lines, keys, closed_at = _entries(text, m.end())
        if keys:
            end = _last_end(text, *lines[-1]) if closed_at is None else closed_at
            found.append(((_above(text, m.start()), end), True))
    return tuple(found) + bundles(text, [span for span, _ in found])


def blocks(text: str) -> tuple[tuple[Span, bool], ...]:
    """The text's Terraform (HCL) blocks, each closed: from the opening line to the `}` at its own indent
    that closes it (the host's sentence may be glued on after the brace), every line between indented
    deeper or blank and one of them an attribute (`key = …`; a CSS rule's `color: red;` is none), but a
    heredoc's text (`<<EOT` … `EOT`), read to its marker. An outer block holds its nested ones (`tags = {`
    … `}`), which end at their own indent."""
    return outermost(_BLOCK_OPEN, text, _block)


def _block(text: str, opener: re.Match[str]) -> Unit | None:
    """The Terraform block that `opener` opens, closed at its body's brace (`brace_body_end`), or None."""
    end = brace_body_end(text, opener, _ATTRIBUTE, heredocs=True)
    return None if end is None else ((opener.start(), end), True)


def brace_body_end(text: str, opener: re.Match[str], counted: re.Pattern[str], *, heredocs: bool = False) -> int | None:
    """Just after the `}` at the opener's indent that closes its body, where every line between is indented
    deeper or blank and one of them is `counted` (a Terraform attribute, a GraphQL field); else None. An
    opener glued after the host's sentence has no indent. With `heredocs`, a heredoc's lines are read to
    its marker (`heredoc_end`), not by their indent. Terraform's blocks and GraphQL's definitions share it."""
    indent = text[line_start(text, opener.start()) : opener.start()]
    indent = indent if not indent.strip() else ""
    i, seen = opener.end(), 0
    for _ in range(MOST_LINES):
        line = text[i : line_end(text, i)]
        if line.startswith(indent + "}"):
            return i + len(indent) + 1 if seen else None
        if line.strip() and not line.startswith((indent + " ", indent + "\t")):
            return None
        seen += counted.match(line) is not None
        i += len(line) + 1
        if heredocs and (heredoc := _HEREDOC.search(line)) is not None:
            i = heredoc_end(text, i, heredoc.group(1))
        if i > len(text):
            return None
    return None


def heredoc_end(text: str, i: int, marker: str) -> int:
    """Where the line after a heredoc's closing marker starts, its text from `i` on: a `<<EOT` heredoc's
    lines stand at any indent, even none, so they are read to the marker, not by their indent; past the
    text where no marker closes it."""
    for _ in range(MOST_LINES):
        if i > len(text):
            break
        line = text[i : line_end(text, i)]
        i += len(line) + 1
        if line.strip() == marker:
            break
    else:
        return len(text) + 1
    return i


def bundles(text: str, taken: list[Span]) -> tuple[tuple[Span, bool], ...]:
    """A resource bundle's entries outside any section (`taken`): `_BUNDLE_LEAST` or more lines of dotted
    keys (`faq.tower.title=…`, as a Java `.properties` file or an i18n catalogue holds them) in a row, a value
    continued over a line that ends in a backslash too, with the comment lines right above the first. Its
    values are prose, so the last line ends at its first sentence end or before a clause opener that the
    host's sentence glued on brings (`layout.raised_opener_cut`; a name too after a short value with no
    capital, "reviewed=true Rowan said …"), not at a name in prose as an INI value's does."""
    found: list[tuple[Span, bool]] = []
    for m in _BUNDLE_KEY.finditer(text):
        if any(a <= m.start() < b for a, b in taken) or (found and m.start() < found[-1][0][1]):
            continue
        lines, keys, _ = _entries(text, m.start())
        if keys >= _BUNDLE_LEAST:
            found.append(((_above(text, m.start()), _bundle_end(text, *lines[-1])), True))
    return tuple(found)


def _bundle_end(text: str, a: int, b: int) -> int:
    """Where a bundle's last line, `text[a:b]`, ends: at its first sentence end, or before a clause opener
    between two lower-case words, or a name so placed after a short value with no capital
    (`layout.raised_opener_cut`)."""
    end = first_end(text, a, b)
    key = _KEY.match(text, a)
    cut = raised_opener_cut(text, key.end() - 1 if key else a, end, casual=key is not None)
    return end if cut is None else cut


def _entries(text: str, i: int) -> tuple[list[Span], int, int | None]:
    """The lines of keys, values, continuations and comments from `i` on, how many hold a key, and where
    an array closed on the last line ends (None where the last line closes none)."""
    lines: list[Span] = []
    keys, array, closed_at = 0, False, None
    while i < len(text) and (_KEY.match(text, i) or _COMMENT.match(text, i) or (array and _ARRAY_CLOSE.match(text, i))
                             or (lines and (_CONTINUED.match(text, i) or text[lines[-1][1] - 1] == "\\"))):
        key, closed_at = _KEY.match(text, i), None
        keys += key is not None
        lines.append((i, line_end(text, i)))
        if array and (close := _ARRAY_CLOSE.match(text, i)):  # the host's words may be glued after its `]`
            array, closed_at = False, close.end()
        elif key:
            array = _ARRAY_OPEN.search(text, i, lines[-1][1]) is not None
        i = lines[-1][1] + 1
    return lines, keys, closed_at


def _last_end(text: str, a: int, b: int) -> int:
    """Where a section's last line, `text[a:b]`, ends. A comment or a continuation is prose: at its first
    sentence end. A key's value is no sentence ("verified = true At that time, …" ends at "true"): before
    the first word past the value's first that opens a sentence (`layout.opener_cut`), else at its first
    sentence end."""
    end = first_end(text, a, b)
    key = _KEY.match(text, a)
    if key is None:
        return end
    value = key.end() - 1
    cut = opener_cut(text, value, end, end - value)
    return end if cut is None else cut


def _above(text: str, start: int) -> int:
    """Where the section that opens at `start` starts: at the first of up to `_MOST_ABOVE` comment lines
    right above its header, else at the header. A whole line is a comment where it opens with the mark;
    else the comment is the line's last mark after a sentence end (the planting glues the first comment
    line onto the host's sentence, which may hold a `; ` of its own: "… , ] ; Swedish: …"). One blank line
    may stand between the header and the comment right above it (a TOML exporter's heading comment)."""
    for step in range(_MOST_ABOVE):
        if start == 0 or line_start(text, start) != start:
            break
        above = start - 1 - (step == 0 and text[start - 2 : start] == "\n\n")  # the line break that ends the line above
        line = line_start(text, above)
        marks = [m.start() for m in _COMMENT_START.finditer(text, line, above)]
        if not marks:
            break
        start = line if marks[0] == line else marks[-1]
        if start != line:
            break
    return start
