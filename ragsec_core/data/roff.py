"""Manual pages (roff source: man(7) and mdoc(7) macros) rendered to plain text, one part per section, and
roff source inside a passage read as one unit (`sources`).

The technical corpus needs ~5,000 pages rendered; spawning `man`/`groff` per page costs ~50 ms each and
gives only the whole page, so this is a small renderer of its own: requests become paragraph breaks or
their text arguments, escapes become the characters they stand for, and `.SH` / `.Sh` start a new part
whose title is the section name. Whatever it does not know it drops rather than leaks: no backslash
escape, request line or font change survives into the text (tests check that on real pages).
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Span
from ragsec_core.data.layout import first_end, line_end

# Named characters that carry meaning in prose; every other \(xx / \[name] is dropped.
_CHARS = {
    "em": "\u2014", "en": "\u2013", "aq": "'", "dq": '"', "lq": "\u201c", "rq": "\u201d", "oq": "\u2018",
    "cq": "\u2019", "bu": "\u2022", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "mu": "\u00d7",
    "->": "\u2192", "<-": "\u2190", "ti": "~", "ha": "^", "rs": "\\", "hy": "-", "mi": "-", "pl": "+",
    "eq": "=", "ga": "`", "at": "@", "sh": "#", "Do": "$", "sl": "/", "ba": "|", "lh": "", "rh": "",
    "de": "\u00b0", "+-": "\u00b1", "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "fm": "\u2032",
}
_STRINGS = {"lq": "\u201c", "rq": "\u201d", "Aq": "'", "aq": "'", "R": "\u00ae", "Tm": "\u2122", "Lq": "\u201c", "Rq": "\u201d"}
# Escapes with a quoted argument whose output is spacing or measurement, not text.
_ESCAPE = re.compile(
    r"""\\(?:
        f(?:\[[^\]]*\]|\(..|.)        # font change
      | s[+-]?(?:\d\d?|\[[^\]]*\]|\(..)  # size
      | [*](?:\[(?P<sb>[^\]]*)\]|\((?P<sp>..)|(?P<s1>.))  # string
      | n[+-]?(?:\[[^\]]*\]|\(..|.)   # number register
      | [hvwlLDNbxoXSZ]'[^']*'          # spacing, drawing, measurement
      | k.|z|c|%|:|\^|\||&|\)|d|u|r|p|t|a|{|}
      | \((?P<cp>..)                  # named char, two letters
      | \[(?P<cb>[^\]]*)\]            # named char, bracketed
      | (?P<lit>[-e\\ ~0`'.])          # literal-ish
      | (?P<other>.)
    )""",
    re.VERBOSE,
)
_BACKSLASH = "\ue000"  # a printed backslash, kept apart from the unknown escapes' backslashes that are dropped
_LITERALS = {"-": "-", "e": _BACKSLASH, "\\": _BACKSLASH, " ": " ", "~": " ", "0": " ", "`": "`", "'": "'", ".": "."}
# man(7) macros whose arguments are text joined without spaces (alternating fonts).
_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
_TEXT_MACROS = {"B", "I", "SM", "SB", "UR", "MT", "OP"}
_BREAKS = {"PP", "LP", "P", "IP", "TP", "HP", "TQ", "sp", "br", "RS", "RE", "Pp", "Lp", "Bl", "El", "Bd", "Ed",
           "Ss", "SS", "It", "EX", "EE", "nf", "fi", "Dl", "D1", "YS", "SY"}
# mdoc(7) macros that may appear as words inside another macro's arguments; they are dropped, their
# arguments kept (`.Op Fl v Ar file` -> "[-v file]").
_MDOC_CALLABLE = {
    "Ad", "An", "Ar", "Cd", "Cm", "Dv", "Er", "Ev", "Fa", "Fn", "Fo", "Fc", "Ft", "Ic", "Li", "Ms", "Mt", "Nm", "Pa",
    "Sy", "Tn", "Va", "Vt", "Em", "No", "Ns", "Sm", "Ql", "Dq", "Do", "Dc", "Sq", "So", "Sc", "Pq", "Po", "Pc",
    "Bq", "Bo", "Bc", "Brq", "Bro", "Brc", "Aq", "Ao", "Ac", "Qq", "Qo", "Qc", "Eo", "Ec", "Op", "Oo", "Oc", "Xo",
    "Xc", "Lk", "St", "Ux", "Bx", "At", "Bsx", "Fx", "Nx", "Ox", "Dx", "Pf", "Ap", "%A", "%T", "%B", "%J", "%D",
    "%N", "%O", "%P", "%Q", "%R", "%U", "%V", "Rs", "Re", "Ta", "Fl", "Xr", "Nd", "Lb", "In", "Ex", "Rv", "Dt", "Dd",
    "Os",
}
_SKIP_BLOCKS = {"de": "..", "am": "..", "ig": "..", "TS": "TE", "EQ": "EN", "PS": "PE"}


def unescape(text: str) -> str:
    """Roff escapes replaced by their characters (or nothing); a `\\"` comment drops the rest of the line."""
    text = re.sub(r'\\".*', "", text)

    def sub(m: re.Match[str]) -> str:
        if (name := m.group("sb") or m.group("sp") or m.group("s1")) is not None:
            return _STRINGS.get(name, "")
        if (name := m.group("cp") or m.group("cb")) is not None:
            return _CHARS.get(name, "")
        if (lit := m.group("lit")) is not None:
            return _LITERALS[lit]
        return ""

    return _ESCAPE.sub(sub, text).replace("\\", "").replace(_BACKSLASH, "\\")


def _args(line: str) -> list[str]:
    """A request's arguments: words, with double-quoted groups kept together."""
    return [a[1:-1] if a.startswith('"') and a.endswith('"') and len(a) > 1 else a
            for a in re.findall(r'"[^"]*"?|\S+', line)]


def _mdoc_words(macro: str, args: list[str]) -> str:
    """An mdoc line's text: flags get their dash, cross references become name(section), macro names go."""
    out: list[str] = []
    words = [macro, *args]
    i = 0
    while i < len(words):
        w = words[i]
        if w == "Fl":
            nxt = words[i + 1] if i + 1 < len(words) and words[i + 1] not in _MDOC_CALLABLE else ""
            out.append("-" + nxt)
            i += 2 if nxt else 1
            continue
        if w == "Xr" and i + 2 < len(words):
            out.append(f"{words[i + 1]}({words[i + 2]})")
            i += 3
            continue
        if w == "Ux":
            out.append("UNIX")
        elif w == "Nd":
            out.append("\u2014")
        elif w not in _MDOC_CALLABLE:
            out.append(w)
        i += 1
    return " ".join(out)


class _Page:
    """Parts being collected: (section title, paragraphs)."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, list[str]]] = [("", [])]
        self.line: list[str] = []
        self.fill = True

    def text(self, s: str) -> None:
        s = s.strip() if self.fill else s.rstrip()
        if not s:
            return
        if self.fill:
            self.line.append(s)
        else:
            self.parts[-1][1].append(s)

    def brk(self) -> None:
        if self.line:
            self.parts[-1][1].append(" ".join(self.line))
            self.line = []

    def section(self, title: str) -> None:
        self.brk()
        self.parts.append((title.strip(), []))

    def done(self) -> list[tuple[str, str]]:
        self.brk()
        out = []
        for title, paras in self.parts:
            body = "\n\n".join(p for p in paras if p.strip())
            body = re.sub(r"[ \t]+", " ", body).strip()
            if body:
                out.append((title, body))
        return out


def render_man(source: str) -> tuple[str, list[tuple[str, str]]]:
    """(page title, [(section title, text)]) of one page's roff source; a `.so` alias page has no parts."""
    page, name, skip_until = _Page(), "", None
    pending_title = False
    for raw in source.split("\n"):
        if skip_until is not None:
            if raw.strip().startswith("." + skip_until.lstrip(".")) or raw.strip() == skip_until:
                skip_until = None
            continue
        if raw.startswith((".\\\"", "'\\\"", '\\"')) or raw.strip() in (".", "'"):
            continue
        if not raw.startswith((".", "'")):
            if pending_title:
                page.section(unescape(raw))
                pending_title = False
            else:
                page.text(unescape(raw))
            continue
        macro, _, rest = raw[1:].lstrip().partition(" ")
        macro, rest = macro.strip(), rest.strip()
        if macro in _SKIP_BLOCKS:
            skip_until = _SKIP_BLOCKS[macro]
            continue
        if macro == "so":
            return "", []
        args = [unescape(a) for a in _args(rest)]
        if macro in ("Dd", "Os"):
            continue
        if macro == "Nm" and not args:
            page.text(name.partition("(")[0])
            continue
        if macro in ("TH", "Dt"):
            if args:
                name = f"{args[0].lower() if macro == 'Dt' else args[0]}({args[1] if len(args) > 1 else ''})"
        elif macro in ("SH", "Sh"):
            if args:
                page.section(" ".join(args))
            else:
                pending_title = True
        elif macro in ("SS", "Ss"):
            page.brk()
            page.text(" ".join(args))
            page.brk()
        elif macro in ("nf", "EX", "Bd"):
            page.brk()
            page.fill = macro == "Bd" and "-literal" not in rest and "-unfilled" not in rest
        elif macro in ("fi", "EE", "Ed"):
            page.brk()
            page.fill = True
        elif macro in _ALTERNATING:
            page.text("".join(args))
        elif macro in _TEXT_MACROS:
            page.text(" ".join(args))
        elif macro in ("TP", "IP", "It", "HP", "TQ"):
            page.brk()
            if macro in ("IP", "It") and args:
                page.text(_mdoc_words("", args) if macro == "It" else args[0])
                page.brk()
        elif macro in _BREAKS:
            page.brk()
        elif macro in _MDOC_CALLABLE:
            page.text(_mdoc_words(macro, args))
        # any other request (.if, .ie, .el, .ds, .nr, .ad, .in, .ft, ...) is formatting: dropped
    return name, page.done()


# A request line of roff source: a `.` and a macro's name of one or two letters (man's `.TH`, `.SH`, `.PP`,
# `.BR`; mdoc's `.Sh`, `.Nm`; roff's `.br`, `.sp`), then its arguments or the line's end. Prose has no such
# line: a sentence does not open with a full stop.
_REQUEST = re.compile(r"\.(?:[A-Z][A-Za-z]?|[a-z]{2})(?=[ \t]|\n|$)")
_FIRST_REQUEST = re.compile(r"(?<!\S)" + _REQUEST.pattern)
# A cross-reference as a SEE ALSO section writes one: a page's name and its section, maybe a comma after.
_XREF = re.compile(r"\.(?:BR|IR|B|I)[ \t]+[\w.+-]+[ \t]*\(\d[a-z]{0,3}\),?")
_SOURCE_REQUESTS = 2  # request lines a run of lines needs to be read as roff source


def sources(text: str) -> tuple[tuple[Span, bool], ...]:
    """The runs of roff source in the text (a manual page, or a section of one, pasted into a passage), each
    with whether its writer closed it: from a request to the end of its last line (`_source_end`), over
    lines up to a blank one, with `_SOURCE_REQUESTS` request lines at least. The first request may follow
    the host's sentence on its line; the others open theirs."""
    out: list[tuple[Span, bool]] = []
    for m in _FIRST_REQUEST.finditer(text):
        if out and m.start() < out[-1][0][1]:
            continue
        lines, pos = [], m.start()
        while pos < len(text):
            stop = line_end(text, pos)
            if not text[pos:stop].strip():
                break
            lines.append((pos, stop, bool(_REQUEST.match(text, pos))))
            pos = stop + 1
        if sum(request for _, _, request in lines) >= _SOURCE_REQUESTS:
            end, closed = _source_end(text, lines)
            out.append(((m.start(), end), closed))
    return tuple(out)


def _source_end(text: str, lines: list[tuple[int, int, bool]]) -> tuple[int, bool]:
    """Where roff source ends, and whether its writer closed it there: after a cross-reference
    (`.BR kb (1)`) on its last line, which closes a page's SEE ALSO section, else at that line's first
    sentence end (the host's text glued on after it)."""
    a, b, request = lines[-1]
    if request and (xref := _XREF.match(text, a)) is not None:
        return xref.end(), True
    return first_end(text, a, b), False
