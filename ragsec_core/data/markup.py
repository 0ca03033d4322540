"""Markup and structured data inside a passage, read as units.

A scraper that keeps HTML leaves tags in a chunk, and one that keeps a page's scripts or tables leaves its
structured data (a JSON record: schema.org's FAQPage, an API's answer; a markdown table). spaCy's
sentencizer reads none of them: it glues "head.</div> Also, …" into one sentence, cuts "-->" in two, cuts
a JSON record after every '?",' and runs a table's last cell into the host sentence after it. The sentence
split (`spans.sentence_spans`) reads the prose with all of them blanked out (`blank`), gives each tag back
to the sentence it opens or closes (`tags.with_markup`) and each structured unit (`records`) back as a
sentence of its own, and cuts around text a browser hides (`tags.hidden_elements`). The boundary reads the
marks the tags carry (`tags`) and where each unit ends.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from ragsec_core._util.text import CLAUSE_OPENERS, CLOSES_SENTENCE, CLOSING_MARKS, Span
from ragsec_core.data.bibliography import entries as bib_entries
from ragsec_core.data.formats import format_units
from ragsec_core.data.frames import frames
from ragsec_core.data.glue import glued_view, to_text
from ragsec_core.data.layout import LAST_LINE, LINE_ON, diffs, end_within, first_end, line_above, scenes, verses
from ragsec_core.data.richtext import documents
from ragsec_core.data.stores import catalogue_entries, components, feed_items, mime_parts, statements

_DECODER = json.JSONDecoder()
# A markdown table: two or more rows on consecutive lines, each of two or more cells between pipes (the
# header and its `|---|` rule count as rows), with its title when a short line without a sentence's end
# or a citation marker stands right above it ("Quick facts"). It runs to its last row's last pipe: text
# after that on the same line is not a cell.
_ROW = r"\|(?:[^|\n]*\|){2,}"
_TITLE = r"(?:[^\s|.!?\[\]][^\n|.!?\]]{0,39}[ \t]*\n[ \t]*)?"  # not a citation marker's "[4]"
_TABLE = re.compile(_TITLE + _ROW + r"(?:[ \t]*\n[ \t]*" + _ROW + r")+")
# A list's items and a message's header fields are lines, not sentences. A list: bullet or numbered item
# lines (a contract's clauses numbered "5.1", "5.2" too), one at least under a title line as a table's, two
# without one. A header block: two or more lines of
# one word, a colon and a value ("From: …", "Subject: …"; a chat log's "User: …", "Assistant: …"). Either
# opens at a line's or a sentence's start (`_opens_line`: "… the TV series Mission: Impossible" holds no
# field, "… $300,000,000. Key facts:" no item "00."). Each
# line runs to its line break; the last one, which the text may go on after on the same line (the host
# sentence after a planted block), to its first sentence end.
_ITEM = r"(?:[-*\u2022+]|\d{1,2}[.)]|\d{1,2}(?:\.\d{1,2}){1,3}\.?)[ \t]+"
_FIELD = r"(?<![\w.@-])[A-Z][A-Za-z-]{1,24}:[ \t]+"
_LOOK_BACK = 64  # characters before a unit that `_opens_line` reads: a sentence's end with its marks fits
_LIST = re.compile(rf"{_TITLE}(?:{_ITEM}{LINE_ON})*{_ITEM}{LAST_LINE}")
_HEADERS = re.compile(rf"{_FIELD}{LINE_ON}(?:{_FIELD}{LINE_ON})*{_FIELD}{LAST_LINE}")
# A transcript's speaker turns on one line, each opened by a speaker's label in capitals ("HOST: …",
# "GUEST: …", "SPEAKER 2: …"), every turn but the last closed by a sentence end: two or more in a row are
# one transcript, its last turn to its first sentence end. Two letters at least, so a "Q: … A: …" pair
# (the faq rules read it) and an airport's "(IATA: BOS, ICAO: KBOS)" are no transcript.
_SPEAKER = r"(?<![\w'’])[A-Z][A-Z0-9]+(?:[ \t][A-Z0-9]+){0,2}:[ \t]+"
_SPOKEN = re.compile(rf"{_SPEAKER}(?:[^\n]*?[.!?]{CLOSING_MARKS}[ \t]+{_SPEAKER})+{LAST_LINE}")
# Code as a documentation corpus holds it: a fenced block (```lang … ```), or comment lines ("// …", "# …")
# above the statement they annotate, an assignment of one value ("const answer = \"24\";"), which ends
# the unit (the host sentence the planting glued on after it is prose). Either is one unit: the sentence
# split cuts comments at their full stops and runs the last line into the prose after it.
_ASSIGN = r"""[A-Za-z_][\w.]*(?:[ \t]+[A-Za-z_]\w*)?[ \t]*=[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[\w.]+);?"""
_CODE = re.compile(rf"```[^\n`]*\n.*?\n[ \t]*```|(?:(?://|#)[ \t][^\n]*\n[ \t]*)+{_ASSIGN}", re.DOTALL)
# A mail reply's quoted text as an indexed mailbox holds it: two or more lines in a row, each opened by ">"
# (the quoted mail, hard-wrapped by the client, its sentences running over the breaks and the marks), with
# the client's attribution line right above them ("On Mon, 3 Mar 2025 at 09:12, Dana <dana@…> wrote:"),
# are one unit, one writer's (`_quoted`). A client wraps each paragraph at one width, so the last line's
# quote is no wider than the widest line of its paragraph above it: it runs to its last sentence end within
# that width, and the host's sentence the planting glued on after it stays out.
_ATTRIBUTION = (r"(?:On[ \t](?:[^\n<>.!?]|[.!?](?!\s)){1,160}?|[A-Z][^\n<>.!?]{0,60}?)(?:[ \t]<[^<>\s]{1,80}>)?"
                r"[ \t]wrote:[ \t]*\n[ \t]*")
_WROTE = re.compile(_ATTRIBUTION)
_REPLY_LINE_WORDS = 12  # words of a reply's own line above the attribution that the quoted mail's unit takes
_QUOTED = re.compile(rf"(?:{_ATTRIBUTION})?>(?:[^\n]{{0,500}}\n[ \t]*>)+[^\n]*")
# LaTeX source as a paper's or a handbook's repository holds it: a sectioning command with its label
# ("\subsection*{…}\label{…}", "\paragraph{…}") is a heading, a unit that leads its text in (`lead_in`)
# as a Markdown heading does, wherever it stands (prose holds none); an environment ("\begin{itemize} …
# \end{itemize}") is one unit that ends at its own closing command, as fenced code does (`closed_units`).
# A command's name and a label's or a citation's key are no words of a sentence (`tags.TEX_MARK`).
_TEX_ARG = r"\{(?:[^{}\n]|\{[^{}\n]*\}){1,200}\}"
_TEX_HEADING = re.compile(rf"\\(?:part|chapter|(?:sub){{0,2}}section|(?:sub)?paragraph)\*?{_TEX_ARG}"
                          r"(?:[ \t]*\\label\{[^{}\n]{1,60}\})?")
_TEX_ENV = re.compile(r"\\begin\{([A-Za-z]+\*?)\}.{0,3000}?\\end\{\1\}", re.DOTALL)
# YAML as a knowledge base's entries or a page's front matter hold it. Front matter, from a "---" line that a
# key line follows to the next "---" line, is one unit closed by its own mark, wherever the first "---"
# stands (prose holds none). A mapping, two or more lines in a row each opened by a lower-case key and a
# colon (the first maybe after a list item's dash), is one unit (`_mappings`); its last value ends at its
# closing quotation mark when it is quoted (a closed unit), else at its first sentence end.
_KEY = r"[a-z_][\w-]{0,30}:(?=[ \t]|\n)"
_KEY_AT = re.compile(_KEY)
_FRONT_MATTER = re.compile(rf"---[ \t]*\n[ \t]*{_KEY}.{{0,3000}}?\n[ \t]*---(?=\s|$)", re.DOTALL)
_MAPPING = re.compile(rf"(?:-[ \t]+)?{_KEY}[^\n]{{0,500}}(?:\n[ \t]*{_KEY}[^\n]{{0,500}})+")
_QUOTED_VALUE = re.compile(r'[ \t]*"(?:[^"\\\n]|\\.)*"')
# A numbered label standing as a sentence of its own ("Footnote 3.", "Figure 2.", "Paragraph 2."): it heads
# the text after it, so a block right after it starts at it (`lead_in`).
_NUMBERED = re.compile(r"[A-Z][a-z]{2,}[ \t]+\d{1,3}\.$")
# A letter's sign-off: a closing line of one to three words and a comma ("Best,", "Kind regards,") alone on
# its line, then the writer's name on the next: one to four capitalised words or initials, the longest run
# of them, which the line ends after or a capitalised word that opens no name follows ("Sam Whitlow The
# Storytime …": the host sentence the planting glued on). A name followed by a lowercase word is a sentence
# ("Hi all,\nCanada passed …"), so no sign-off.
_NAME_WORD = rf"(?!(?:{'|'.join(sorted(w.capitalize() for w in CLAUSE_OPENERS))})\b)(?:[A-Z][a-z'’-]+|[A-Z]\.)"
# A post's byline: who wrote the text that follows, as a forum, a comment thread or a Q&A site prints it
# ("Reply from quietfox42: …", "Posted by m_harlow (top contributor): …", "Answered by Lena Brandt: …"),
# a verb or noun of posting, "by" or "from", a handle (one token) or a name (capitalised words), an optional
# role in brackets and a colon. With the text after it to its first sentence end it is one unit: the line a
# post opens with, which an article's prose never holds (a byline names the writer of what follows, so
# `lead_in` starts a block right after it at it).
_HANDLE = r"(?:[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,2}|[\w.@-]{2,30})"
_BYLINE = re.compile(rf"(?:(?:Reply|Comment|Post|Answer|Response|Message)[ \t]+(?:from|by)|(?:Posted|Written|Answered"
                     rf"|Replied|Commented|Submitted)[ \t]+by)[ \t]+{_HANDLE}(?:[ \t]+\([^()\n]{{1,40}}\))?:[ \t]+{LAST_LINE}")
# A post's frame on a review or social site, as a scraper keeps it around the post's text. Its header says
# who wrote the post and how they rated: a review's rating line, one or more of stars ("★★★★☆"), a rating
# ("Rated 4 out of 5 by m_harlow.", "4.0 out of 5 stars"), "Verified purchase.", "Reviewed on 11 July
# 2023.", or a poster's handle ("@m_harlow:", "m_harlow posted:"). It is a unit of its own, which leads
# the post's text in (`lead_in`; not to the text's first sentence end, as a byline's unit runs: a review's
# first sentence may hold "A.A. Milne"). Its footer is the post's last line: hashtags and the post's
# counts ("#DonkeyTalk · 28 reposts", "33 people found this helpful."), a unit of its own (spaCy leaves a
# tag's "#" on the sentence before it), which a block opened at the post's header runs to
# (`through_footer`). A rating needs "Rated" or "stars": "3 out of 5 doctors …" is prose.
_RATING_PART = (rf"(?:[★☆]{{3,10}}|Rated[ \t]+\d(?:\.\d)?[ \t]+out[ \t]+of[ \t]+(?:5|10)(?:[ \t]+stars)?(?:[ \t]+by[ \t]+{_HANDLE})?\.?"
                r"|\d(?:\.\d)?[ \t]+out[ \t]+of[ \t]+5[ \t]+stars\.?|Verified[ \t]+(?:purchase|buyer)\."
                r"|Reviewed[ \t]+(?:on|in)[ \t]+[^.!?\n]{3,60}\.)")
_POST_HEADER = re.compile(rf"(?:{_RATING_PART}(?:[ \t]+{_RATING_PART})*|(?:@[\w.]{{2,30}}|{_HANDLE}[ \t]+(?:posted|wrote|tweeted))"
                          rf"(?:[ \t]+\([^()\n]{{1,40}}\))?:)(?=\s)")
_TAGS = r"#[A-Za-z]\w*(?:[ \t]+#[A-Za-z]\w*)*"
_COUNT = (r"(?:\d[\d,]*(?:\.\d)?[kK]?[ \t]+(?:people[ \t]+found[ \t]+this[ \t]+helpful|reposts|retweets|likes|shares|replies"
          r"|comments|upvotes)|(?:1|One)[ \t]+person[ \t]+found[ \t]+this[ \t]+helpful)")
_FOOTER = re.compile(rf"(?:{_TAGS}(?:[ \t]+[·•|][ \t]+{_COUNT})?|{_COUNT})\.?(?=\s|$)")
# MediaWiki source as a raw dump keeps it: a section heading on a line of its own ("== History ==") is a unit
# that leads the section's text in (`lead_in`); a template right after a sentence's end, in a reference's
# tags or not ("….{{citation needed|date=July 2017}}", "….<ref>{{cite web|…}}</ref>"), is a note, a unit
# of its own that the sentence before it keeps (`through_notes`), as it keeps a "[citation needed]": spaCy
# read it as the start of the next sentence and glued that sentence to it. A template inside a sentence
# ("born {{birth date|1950|1|1}} in …") is a phrase of that sentence.
_WIKI_HEADING = re.compile(r"(={2,6})[ \t]*[^=\n]{1,80}?[ \t]*\1(?=[ \t]*(?:\n|$))")
# Markdown's heading ("## History", one to six marks and a space) runs to its line's end and is a unit that
# leads its text in, as a wiki heading is (`lead_in`); "#tag" without the space is a hashtag (`_TAGS`).
_MD_HEADING = re.compile(r"#{1,6}[ \t]+[^#\s][^#\n]{0,79}?(?=[ \t]*(?:\n|$))")
# A photo's or a quotation's credit after a sentence ("Credit: staff photographer.", "(Photo: Wikimedia
# Commons.)", "Source: my old textbook."): a label of its own and a few words, a note that the sentence
# before it keeps (`through_notes`), as it keeps a citation template.
_CREDIT = re.compile(r"\(?(?:Photo|Image|Picture|Credit|Source|Courtesy)s?:[ \t][^.\n()]{1,60}\.\)?(?=\s|$)")
_WIKI_NOTE = re.compile(r"(?:<ref(?:\s[^<>]*)?>[ \t]*)?\{\{[^{}\n]{1,300}\}\}(?:[ \t]*</ref>)?")
_SIGN_OFF = re.compile(rf"(?m)^[ \t]*[A-Z][a-z]+(?:[ \t]+[a-z]+){{0,2}},[ \t]*\n[ \t]*{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,3}}"
                       rf"(?![ \t]+{_NAME_WORD})(?=[ \t]*(?:\n|$)|[ \t]+[A-Z\"“])")


def records(text: str) -> list[Span]:
    """The structured units of the text, in order: JSON records (`json_records`), markdown tables, lists,
    header blocks, spoken transcripts, letters' sign-offs, posts' bylines, headers and footers, wiki
    headings and notes, code, quoted mails, LaTeX headings and environments, YAML front matter and
    mappings, unified diffs, screenplay scenes and verses (`data.layout`), roff source (`data.roff`),
    threads (`data.threads`), SQL dumps' rows, feed items, iCalendar or vCard components, multipart bodies
    and catalogue entries (`data.stores`), rich text (`data.richtext`), BibTeX entries
    (`data.bibliography`), framed blocks (`data.frames`) and the units of the formats that
    `formats.FORMAT_UNITS` reads (roff source, threads, reStructuredText, change logs, Org entries, slides,
    commits, INI and TOML sections, resource bundles and Terraform blocks, POD blocks, tickets, rendered
    manual pages, namespaced XML elements, crawled pages, chat exports and log excerpts, AsciiDoc source,
    RIS and MARC records, Jira markup, HL7 messages and GEDCOM records), outermost only
    (a table inside a record's string is the record's). A fresh list over one reading per text: the split
    and the boundary's rules ask for the same chunk's. Read on the text with a space at each sentence end
    glued to a block (`glue.glued_view`), the units mapped back."""
    view, spaces = glued_view(text)
    return [to_text(unit, spaces) for unit in _records(view)]


@lru_cache(maxsize=512)
def _records(text: str) -> tuple[Span, ...]:
    found = sorted(list(_closed_found(text)) + lists(text) + list(header_blocks(text))
                   + [m.span() for m in _SIGN_OFF.finditer(text)]
                   + _line_units(_BYLINE, text) + _line_units(_POST_HEADER, text) + _line_units(_FOOTER, text)
                   + _line_units(_WIKI_HEADING, text) + _line_units(_MD_HEADING, text) + _wiki_notes(text)
                   + _line_units(_SPOKEN, text)
                   + list(_quoted(text)) + [m.span() for m in _TEX_HEADING.finditer(text)] + list(scenes(text))
                   + list(verses(text)) + [span for span, closed in _maybe_closed(text) if not closed],
                   key=lambda span: (span[0], -span[1]))  # of two units that start together, the longer is outer
    out: list[Span] = []
    for a, b in found:
        if not out or a >= out[-1][1]:
            out.append((a, b))
    return tuple(out)


def closed_units(text: str) -> set[Span]:
    """The units (`records`) that end at a mark of their own (`_closed_found` names them: a JSON record's
    closing brace, a table's last pipe, a code fence, an SQL statement's `;`, a calendar component's `END:`
    line, a BibTeX entry's closing brace, a frame's bottom rule, …). The writer closed them, so a sentence
    after one does not run on from it (the other units' last line runs to its first sentence end, and a
    chat turn's or a header block's text may go on after that)."""
    view, spaces = glued_view(text)
    return {to_text(unit, spaces) for unit in set(_records(view)).intersection(_closed_found(view))}


@lru_cache(maxsize=512)
def _closed_found(text: str) -> tuple[Span, ...]:
    """The closed units of the text as found (JSON records, tables, code, LaTeX environments, YAML front
    matter, quoted mappings, diffs, SQL statements, feed items, calendar components, multipart bodies,
    catalogue entries, rich text, BibTeX entries, frames, and the closed ones of `formats.FORMAT_UNITS`:
    roff source closed by a cross-reference, a Debian change-log entry, a slide closed by its notes, …),
    inner ones too, read once per text: `_records` keeps the outermost units among them
    and the others, `closed_units` asks which of those these are."""
    return tuple(json_records(text) + [m.span() for m in _TABLE.finditer(text)] + _line_units(_CODE, text)
                 + [m.span() for m in _TEX_ENV.finditer(text)] + [m.span() for m in _FRONT_MATTER.finditer(text)]
                 + [span for span, closed in _maybe_closed(text) if closed] + list(diffs(text)) + list(statements(text))
                 + list(feed_items(text)) + list(components(text)) + list(mime_parts(text))
                 + list(catalogue_entries(text)) + list(documents(text)) + list(bib_entries(text))
                 + list(frames(text)))


def whole_units(text: str, span: Span) -> Span:
    """The span grown over each structured unit (`records`) it cuts: a unit is read as one sentence, so the
    boundary no more ends inside one ("From: …\nSubject: Re: <the question>" cut at its bait) than inside a
    word."""
    a, b = span
    for u, v in records(text):
        if u < b and a < v:
            a, b = min(a, u), max(b, v)
    return a, b


def lead_in(text: str, span: Span) -> Span:
    """The span started at the structured unit or the numbered label (`_NUMBERED`) that ends right before it,
    only spaces and line breaks between: an e-mail's header block is its body's lead-in, as
    `splice._bait_start` reads it before a claim, also where the block's start was read back past the claim
    (a set-up sentence, `premise`), and a label heads the text after it."""
    unit = next(((u, v) for u, v in records(text) if v <= span[0] and not text[v : span[0]].strip()), None)
    if unit is None:
        before = text[: span[0]].rstrip()
        label = _NUMBERED.search(before, max(0, len(before) - 40))
        unit = label.span() if label is not None and _opens_line(text, label.start()) else None
    return (unit[0], span[1]) if unit is not None else span


def through_sign_off(text: str, span: Span) -> Span:
    """A span that opens with a message's header block run at least to the message's sign-off (`_SIGN_OFF`,
    the first after the header and before any next header block): header, body and signature are one
    writer's message, so a body sentence the local LM's reading leaves out between the claim and the
    signature is still the message's."""
    heads = header_blocks(text)
    head = next((u for u in heads if u[0] == span[0]), None)
    if head is None:
        return span
    limit = next((u for u, _ in heads if u > head[0]), len(text))
    sign_off = _SIGN_OFF.search(text, head[1], limit)
    return (span[0], max(span[1], sign_off.end())) if sign_off is not None else span


def through_footer(text: str, span: Span) -> Span:
    """A span that opens with a post's header (a byline, a rating line, a poster's handle) run at least to
    the post's footer (`_FOOTER`, the first after the header, before the next post's header and the
    paragraph's end): the closing remark between the claim and the counts is the post's, whatever the
    local LM's reading says of it. Applied to the block grown over its units (`whole_units`): a claim
    sentence inside a byline's unit reaches the byline only there (a rating line or a handle, a unit of its
    own, leads the block in earlier, `lead_in`)."""
    heads = sorted(_line_units(_BYLINE, text) + _line_units(_POST_HEADER, text))
    head = next((u for u in heads if u[0] == span[0]), None)
    if head is None:
        return span
    paragraph = text.find("\n\n", head[1])
    limit = min(next((u for u, _ in heads if u > head[0]), len(text)), paragraph if paragraph >= 0 else len(text))
    footer = next(((u, v) for u, v in _line_units(_FOOTER, text) if head[1] <= u and v <= limit), None)
    return (span[0], max(span[1], footer[1])) if footer is not None else span


def through_notes(text: str, span: Span) -> Span:
    """The span run over the wiki notes (`_WIKI_NOTE`) and credits (`_CREDIT`) right after it, only spaces
    between: a note belongs to the sentence it follows, which the span ends with."""
    notes = sorted(_wiki_notes(text) + _line_units(_CREDIT, text))
    end = span[1]
    while (note := next(((u, v) for u, v in notes if u >= end and not text[end:u].strip()), None)) is not None:
        end = note[1]
    return (span[0], end)


def _wiki_notes(text: str) -> list[Span]:
    """The wiki templates (with their reference tags) that follow a sentence's end (`_opens_line`), or a
    note that does, only spaces between ("….{{a}}{{b}}")."""
    notes: list[Span] = []
    for m in _WIKI_NOTE.finditer(text):
        if _opens_line(text, m.start()) or (notes and not text[notes[-1][1] : m.start()].strip()):
            notes.append(m.span())
    return notes


def lists(text: str) -> list[Span]:
    """The lists of the text (`_LIST`): under a title line, or of two items at least."""
    return [(a, b) for a, b in _line_units(_LIST, text) if "\n" in text[a:b]]  # one item alone is no list


@lru_cache(maxsize=512)
def header_blocks(text: str) -> tuple[Span, ...]:
    """The header blocks of the text (`_HEADERS`), read once per text: `_records` and `through_sign_off` ask
    for the same chunk's on every block the boundary draws."""
    return tuple(_line_units(_HEADERS, text))


def replies(text: str) -> set[Span]:
    """The units (`records`) that are quoted mails that start at the client's attribution line ("… wrote:"):
    a reply stands above the attribution, so a block that starts there may start earlier (the reply's own
    lines, which `premise` reads as before a block that opens unmarked). A unit that took the reply's own
    line above (`_quoted`) is the whole message already, and is none of these."""
    view, spaces = glued_view(text)
    quoted = _quoted(view)
    return {to_text(u, spaces) for u in _records(view) if u in quoted and _WROTE.match(view, u[0]) is not None}


@lru_cache(maxsize=512)
def _quoted(text: str) -> tuple[Span, ...]:
    """The quoted mails of the text (`_QUOTED`), each cut after its last line's last sentence end within the
    width of the widest line of its paragraph above (of the whole quote when the last line is a paragraph
    of its own); at the line's first sentence end when none is within it. A reply's own last line above
    the attribution, a blank line between (`layout.line_above`: "Thanks, that settles it."), starts it:
    the reply and the mail it quotes are one message. Read once per text: `_records`
    and `replies` (asked on every block the boundary draws) want the same chunk's."""
    out = []
    for a, b in _line_units(_QUOTED, text):
        last = text.rfind("\n", a, b) + 1
        lines = [line.strip() for line in text[a:last].split("\n") if line.lstrip().startswith(">")]
        para = lines[max((i for i, line in enumerate(lines) if line == ">"), default=-1) + 1:]
        own = line_above(text, a, _REPLY_LINE_WORDS) if _WROTE.match(text, a) is not None else None
        out.append((own[0] if own else a, end_within(text, last, b, max(len(line) for line in para or lines))))
    return tuple(out)


@lru_cache(maxsize=512)
def _maybe_closed(text: str) -> tuple[tuple[Span, bool], ...]:
    """The units that end at a mark of their own or not, each with whether it does: YAML mappings
    (`_mappings`) and the units of the formats each read by a module of its own (`formats.FORMAT_UNITS`).
    Read once per text: `_records` takes the open ones and `_closed_found` the closed ones."""
    return _mappings(text) + format_units(text)


def _mappings(text: str) -> tuple[tuple[Span, bool], ...]:
    """The YAML mappings of the text (`_MAPPING`), each with whether it is closed: its last value cut at its
    closing quotation mark when quoted, else at its line's first sentence end."""
    out = []
    for a, b in _line_units(_MAPPING, text):
        last = text.rfind("\n", a, b) + 1
        line = text[last:b]
        key = _KEY_AT.match(text, last + len(line) - len(line.lstrip(" \t-")))
        quoted = _QUOTED_VALUE.match(text, key.end()) if key is not None else None
        if quoted is not None:
            out.append(((a, quoted.end()), True))
            continue
        out.append(((a, first_end(text, last, b)), False))
    return tuple(out)


def _line_units(pattern: re.Pattern[str], text: str) -> list[Span]:
    """The pattern's matches that open a line or a sentence (`_opens_line`), a rejected match's later start
    tried too (the field "Mission: Impossible" runs over the line of a real "From: …")."""
    out: list[Span] = []
    i = 0
    while (m := pattern.search(text, i)) is not None:
        if _opens_line(text, m.start()):
            out.append(m.span())
            i = m.end()
        else:
            i = m.start() + 1
    return out


def _opens_line(text: str, i: int) -> bool:
    """Position `i` starts a line or a sentence: only spaces since the last line break, or a sentence's
    closing mark (with its quotes, brackets and citation markers) before it."""
    before = text[max(0, i - _LOOK_BACK) : i].rstrip(" \t")
    return (i <= _LOOK_BACK and not before) or before.endswith("\n") or CLOSES_SENTENCE.search(before) is not None


def json_records(text: str) -> list[Span]:
    """The JSON objects in the text that parse as JSON and hold at least one key, outermost only. A
    formula's braces (`{\\displaystyle …}`) or a Python dict's quotes do not parse, so prose keeps them."""
    out: list[Span] = []
    i = text.find("{")
    while i >= 0:
        try:
            value, end = _DECODER.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict) and value:
            out.append((i, end))
        i = text.find("{", end)
    return out
