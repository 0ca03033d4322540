"""A program's own data files inside a passage, each read as one unit: Protocol Buffers' text format, Lisp
data in S-expressions, an LDAP directory's LDIF and an application's KDL document.

A RAG system over a service's configuration, an editor's data files or a company directory holds records
as their programs wrote them. Text format: `field: value` lines, a value a quoted string, a number, a
boolean or an enum name, messages nested between `name {` and `}`, `#` comments (a file's `# proto-file:`
header above). S-expressions: a form in parentheses over several lines, strings in quotes, keyword
arguments (`:answer "…"`), quoted lists (`'("…" "…")`), `;` comments above. LDIF: an entry's `dn:` line
(a `version:` line and `#` comments maybe above), then `attribute: value` lines, a long value folded onto
lines that open with one space, inside a word. KDL: a node's name, then its quoted arguments and
`key=value` properties with no colon between, its children between `{` and `}`, `//` comments above. The
sentence split reads none of it: it cuts a string or a
value at its full stops, reads a header comment or an opening line as words of the host's sentence glued on
before it, and runs the last line into the host's next sentence. So each is one closed unit: a text-format
document from its header comments to its last field or `}` at the outer level, a form from the comments
above it to its closing parenthesis, an LDIF entry (or entries one blank line apart) from its `version:` or
comment lines to its last value, which ends where the host's glued sentence opens (`layout.value_end`),
and a KDL node with children from its comments to the `}` that closes them.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Unit, outermost
from ragsec_core.data.configs import brace_body_end
from ragsec_core.data.layout import MOST_LINES, after_sentence, line_end, line_start, value_end

COMMENTS_ABOVE = 4  # comment lines above a document's first line read as its own
_FIELD_NAME = r"[a-z_][a-z0-9_]{0,60}"
_SCALAR = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[-+]?\d[\w.+-]*|true|false|[A-Z][A-Z0-9_]*)(?![\w.])"""
_TP_START = re.compile(rf"(?<!\S)(?:#[^\n]*\n(?:[ \t]*\n)?){{0,{COMMENTS_ABOVE}}}(?P<open>{_FIELD_NAME})[ \t]*(?::[ \t]*[\"'\w+-]|:?[ \t]*\{{[ \t]*\n)")
_TP_FIELD = re.compile(rf"[ \t]*{_FIELD_NAME}[ \t]*:[ \t]*{_SCALAR}")
_TP_OPEN = re.compile(rf"[ \t]*{_FIELD_NAME}[ \t]*:?[ \t]*\{{[ \t]*$")
_TP_CLOSE = re.compile(r"[ \t]*\}")
_TP_COMMENT = re.compile(r"[ \t]*#")
_TP_LEAST = 2  # fields a text-format document holds at least
# what may open a document's first line above its opener: a comment's mark (LDIF's `version:` line too),
# and the marks that only a writer's whole-line comment opens with (`;;`, `# `), wherever its line starts
_TP_ABOVE, _SEXP_ABOVE, _LDIF_ABOVE = re.compile(r"#(#?[ \t])?"), re.compile(r";(;)?"), re.compile(r"#(#?[ \t])?|(version:)")
_SYMBOL = r"[a-z][\w:*+!?<>=/.-]{0,60}"
# a form's opening parenthesis and head symbol, the comment lines above it (one blank line maybe between)
_SEXP_START = re.compile(rf"(?<!\S)(?:;[^\n]*\n(?:[ \t]*\n)?){{0,{COMMENTS_ABOVE}}}(?P<open>\(){_SYMBOL}(?=[ \t]*\n|[ \t]+[^\s)])")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')  # a Lisp string, over lines maybe
_DN = r"dn::?[ \t]*\S"  # an LDIF entry's `dn:` line (`dn::` where its value is base64)
LDIF_FIRST = r"(?:version:[ \t]*\d|dn::?[ \t])"  # an LDIF export's first line (`glue`'s too: "….dn: uid=…")
_LDIF_START = re.compile(rf"(?<!\S)(?:version:[ \t]*\d+[ \t]*\n(?:[ \t]*\n)?)?(?:#[^\n]*\n){{0,{COMMENTS_ABOVE}}}(?P<open>{_DN})")
_LDIF_LINE = re.compile(r"[A-Za-z][\w-]{0,60}(?:;[\w-]+)*::?<?[ \t]*(?=\S)|-[ \t]*$")  # `cn: …`, `jpegPhoto:: …`, a change's `-`
_LDIF_NEXT = re.compile(rf"(?:#[^\n]*\n){{0,{COMMENTS_ABOVE}}}{_DN}")  # the entry after one blank line
_LDIF_LEAST = 2  # attribute lines an entry holds at least
SLASH_COMMENTS = rf"(?://[^\n]*\n(?:[ \t]*\n)?){{0,{COMMENTS_ABOVE}}}"  # `//` comment lines above a KDL node, a DOT graph
SLASHES = re.compile(r"//( )?")  # a `//` comment's mark (KDL's, DOT's: `graphs`); `// ` only a writer's whole-line comment opens with
# a KDL node's arguments and properties: a quoted string, a number, a keyword, `key=value` (no space around `=`)
_KDL_VALUE = r"""(?:"(?:[^"\\\n]|\\.)*"|[-+]?\d[\w.]*|#?(?:true|false|null)|[A-Za-z_][\w-]{0,60}=\S+)"""
_KDL_NAME, _KDL_BRACE = r"[A-Za-z_][\w.-]{0,60}", r"[ \t]*\{[ \t]*\n"  # a node's name; `{` ending its line
_KDL_NODE = rf"{_KDL_NAME}(?:[ \t]+{_KDL_VALUE}){{0,20}}"
KDL_OPENER = rf"{_KDL_NAME}(?:[ \t]+{_KDL_VALUE}){{1,20}}{_KDL_BRACE}"  # a node with a value and children (glue's)
_KDL_START = re.compile(rf"(?<!\S){SLASH_COMMENTS}(?P<open>{_KDL_NODE}){_KDL_BRACE}")
_KDL_CHILD = re.compile(rf"[ \t]+(?://[^\n]*|{_KDL_NODE}[ \t]*(?:\{{|;)?|\}})[ \t]*$")  # a child node's whole line
_KDL_STRING_CHILD = re.compile(rf'[ \t]+{_KDL_NAME}(?:[ \t]+{_KDL_VALUE})*?[ \t]+"')


def data_files(text: str) -> tuple[Unit, ...]:
    """The text's text-format documents, S-expression forms and LDIF entries, each closed."""
    return (outermost(_TP_START, text, _textproto) + outermost(_SEXP_START, text, _form)
            + outermost(_LDIF_START, text, _ldif) + outermost(_KDL_START, text, _kdl))


def document_start(text: str, m: re.Match[str], above: re.Pattern[str]) -> int:
    """Where the document that `m` matched starts: at the first mark of `above` on the match's first line
    that only a writer's comment opens with (its group: `;;`, `# `) or that opens its own line
    (`layout.after_sentence`); a host's own `;` or `#22` after a word is none ("Roberta Vinci (] ; born
    1983)", "hit #22 on the chart"), while the planting may glue a comment after a host's word or title
    ("I Wan'na ;;; faq-data.el"). Else at the match's next line, or at its opener where no line stands
    above it. DOT's graphs (`graphs`) start alike."""
    first = line_end(text, m.start())
    for mark in above.finditer(text, m.start(), min(first, m.start("open"))):
        if mark.lastindex or after_sentence(text, mark.start()):
            return mark.start()
    return min(first + 1, m.start("open"))


def _textproto(text: str, opener: re.Match[str]) -> Unit | None:
    """The text-format document that `opener` opens: its lines of fields, nested messages, comments and
    single blank lines, to the last field or `}` at the outer level (the host's words may follow it on its
    line); None where it holds fewer than `_TP_LEAST` fields or no field or `}` closes a line at the outer
    level (a message it opens never closes)."""
    i, depth, fields, last, blanks = opener.start("open"), 0, 0, None, 0
    for _ in range(MOST_LINES):
        if i > len(text):
            break
        stop = line_end(text, i)
        line = text[i:stop]
        if _TP_COMMENT.match(line) or not line.strip():
            blanks = 0 if line.strip() else blanks + 1
            if blanks > 1:
                break
            i = stop + 1
            continue
        blanks, closing = 0, _TP_CLOSE.match(line) if depth else None
        if _TP_OPEN.match(line):
            depth += 1
        elif (read := _TP_FIELD.match(line) or closing) is not None:
            fields, depth = fields + (read is not closing), depth - (read is closing)
            last = i + read.end() if depth == 0 else last
            if line[read.end() :].strip():  # the host's words glued on after it
                break
        else:
            break
        i = stop + 1
    return None if last is None or fields < _TP_LEAST else ((document_start(text, opener, _TP_ABOVE), last), True)


def _form(text: str, opener: re.Match[str]) -> Unit | None:
    """The S-expression form whose head `opener` opens, from the comments above it to the parenthesis that
    closes it (strings and `;` comments read as such), where it runs over two lines at least and holds a
    string; else None (a parenthesised aside of prose)."""
    depth, strings, lines, k = 0, 0, 0, opener.start("open")
    while k < len(text) and lines < MOST_LINES:
        ch = text[k]
        if ch == '"':
            end = _STRING.match(text, k)
            if end is None:
                return None
            lines, strings, k = lines + text.count("\n", k, end.end()), strings + 1, end.end()
            continue
        if ch == ";":
            k = line_end(text, k)
            continue
        lines += ch == "\n"
        depth += (ch == "(") - (ch == ")")
        k += 1
        if depth == 0:
            return ((document_start(text, opener, _SEXP_ABOVE), k), True) if lines and strings else None
    return None


def _ldif(text: str, opener: re.Match[str]) -> Unit | None:
    """The LDIF entry that `opener` opens, and the entries that follow it one blank line apart: its
    attribute lines, the lines that continue them (one space first) and comment lines, to its last line's
    value, which ends where the host's glued sentence opens (`value_end`); None where it holds fewer than
    `_LDIF_LEAST` attribute lines beside its `dn:`."""
    i, attributes, last = opener.start("open"), 0, None
    for _ in range(MOST_LINES):
        if i > len(text):
            break
        stop = line_end(text, i)
        line = text[i:stop]
        if (read := _LDIF_LINE.match(line)) is not None:
            attributes, last = attributes + 1, i + read.end()
        elif line.startswith(" ") and last is not None:
            last = i + 1
        elif not (line.startswith("#") or (not line.strip() and _LDIF_NEXT.match(text, stop + 1))):
            break
        i = stop + 1
    if last is None or attributes <= _LDIF_LEAST:
        return None
    return (document_start(text, opener, _LDIF_ABOVE), value_end(text, last)), True


def _kdl(text: str, opener: re.Match[str]) -> Unit | None:
    """The KDL node that `opener` opens with its children, from the `//` comments above it to the `}` at
    its own indent that closes them (`configs.brace_body_end`), every line between a child node's, a
    comment's or a nested node's closing brace (`_KDL_CHILD`; a CSS rule's `color: red;` or a Terraform
    attribute's `key = …` is none), one of them a node with a quoted argument; else None."""
    end = brace_body_end(text, opener, _KDL_STRING_CHILD)
    if end is None or not all(_KDL_CHILD.match(line) or not line.strip()
                              for line in text[opener.end() : line_start(text, end)].splitlines()):
        return None
    return (document_start(text, opener, SLASHES), end), True
