"""Markup and structured data read as units (data/markup.py) and how the sentence split uses them."""

from ragsec_core.data.markup import (
    closed_units,
    json_records,
    lead_in,
    records,
    replies,
    through_footer,
    through_notes,
    through_sign_off,
    whole_units,
)
from ragsec_core.data.spans import sentence_spans
from ragsec_core.data.tags import element_end, opens_element, opens_hidden


def test_markup_between_sentences_goes_with_the_sentence_it_opens_or_closes():
    """spaCy alone glues "</div> Next" into one sentence and cuts "-->" in two; read with the tags blanked,
    each wrapper stays whole with the sentences it wraps, and tags inside a sentence stay inside it."""
    t = ("The tower is tall.<div hidden>It was built by Mara. She was young.</div> Host again. "
         "<!-- A comment here. --> <br/> The <b>Beast</b> castle.")
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "The tower is tall.", "<div hidden>It was built by Mara.", "She was young.</div>", "Host again.",
        "<!-- A comment here. --> <br/>", "The <b>Beast</b> castle."]
    plain = "The tower is tall. It was built by Mara. Host again."
    assert sentence_spans(plain) == [(0, 18), (19, 40), (41, 52)]
    assert opens_element("<div hidden>It was.") and opens_element("<!-- x") and opens_element('<span style="a">x')
    assert not any(opens_element(x) for x in ("</div> x", "--> x", "<br/> x", "It <b>was</b>.", "a < b > c"))


def test_hidden_elements_and_where_an_element_closes():
    """A browser hides a comment, the `hidden` attribute and a hiding style; CSS's "overflow: hidden" and a
    class name hide nothing. An element closes at its own closing tag, nested ones of its name counted."""
    assert all(opens_hidden(x) for x in ("<div hidden>It.", '<span style="display: none">It.', "<!-- It",
                                         "<p style='visibility:hidden'>It.", "<DIV HIDDEN=''>It."))
    assert not any(opens_hidden(x) for x in ("<div>It.", '<div style="overflow: hidden">It.',
                                             '<div class="hidden-xs">It.', "</div hidden>", "It <b hidden>."))
    t = "a <div hidden>x <div>y</div> z</div> b <!-- c --> d"
    assert t[: element_end(t, 2)] == "a <div hidden>x <div>y</div> z</div>"
    assert t[t.index("<!--") : element_end(t, t.index("<!--"))] == "<!-- c -->"
    assert element_end("<div>open", 0) is None and element_end("no tag", 0) is None


def test_a_json_record_is_one_sentence_and_braces_that_do_not_parse_stay_prose():
    """spaCy cuts a record after every '?",' and glues its '{"' to the host sentence before it; a record
    that parses is one sentence, inside a host sentence too. A formula's braces and a Python dict's quotes
    do not parse, and an empty object holds nothing."""
    rec = '{"question": "who recorded it?", "answer": "Frank Sinatra", "verified": true}'
    t = f"It was in Blue Hawaii. {rec} Later it was recorded. A formula {{\\displaystyle A={{\\frac {{1}}{{2}}}}}} holds."
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "It was in Blue Hawaii.", rec, "Later it was recorded.", "A formula {\\displaystyle A={\\frac {1}{2}}} holds."]
    mid = f"The song {rec} was a hit."
    assert [mid[a:b] for a, b in sentence_spans(mid)] == ["The song", rec, "was a hit."]
    nested = '{"@type": "FAQPage", "mainEntity": [{"name": "q?", "acceptedAnswer": {"text": "A. B."}}]}'
    assert json_records(f"x {nested} y") == [(2, 2 + len(nested))]
    assert json_records("Gell, {'1': \", '2': \"} (born 1945) and {} and {\"a\": }") == []


def test_a_markdown_table_with_its_title_is_one_sentence_and_ends_at_its_last_pipe():
    """Rows on consecutive lines are one unit, with a short title line right above them; prose after the
    last row's last pipe on the same line is the host's, and a citation marker before the title is not
    part of it. One line of cells is no table."""
    t = "It is tall.[4] Quick facts\n| Fact | Value |\n| who wrote it | John Williams | The theme was Lalo's."
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "It is tall.[4]", "Quick facts\n| Fact | Value |\n| who wrote it | John Williams |", "The theme was Lalo's."]
    t = "It is tall. | Question | Answer |\n|---|---|\n| who wrote it? | John Williams |"
    assert [t[a:b] for a, b in sentence_spans(t)][1:] == ["| Question | Answer |\n|---|---|\n| who wrote it? | John Williams |"]
    assert records("A | B | C is one line. It is tall.") == []


def test_an_element_a_browser_hides_is_cut_from_the_visible_sentence_around_it():
    """A bare title host has no full stop, so spaCy reads the comment glued after it as the title's
    sentence; text no reader sees is no part of a visible sentence, while a visible inline tag stays inside."""
    t = "Ocean of Confusion: Songs 1990–1996 <!-- Cleo had 5 members. Thus, more. --> The band formed."
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "Ocean of Confusion: Songs 1990–1996", "<!-- Cleo had 5 members.", "Thus, more. -->", "The band formed."]
    t = 'Host text <span style="display:none">claim here</span> goes on. It <b>was</b> fine.'
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "Host text", '<span style="display:none">claim here</span>', "goes on.", "It <b>was</b> fine."]


def test_a_list_under_its_title_or_of_two_items_is_one_unit():
    """Bullet or numbered lines are one unit with the short title line above them; the last item ends at
    its first sentence end (the host sentence after it on the same line is the host's); a dash or a
    number inside prose, or the end of "$300,000,000." before a title, is no item."""
    t = "It cost $300,000,000. Key facts:\n- In the film, he sang.\n- Thus, a classic. Justice goes on."
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "It cost $300,000,000.", "Key facts:\n- In the film, he sang.\n- Thus, a classic.", "Justice goes on."]
    t = "Host text ends. 1. one thing\n2. another thing. Host again."
    assert [t[a:b] for a, b in records(t)] == ["1. one thing\n2. another thing."]
    assert records("The years 1990 - 1995 were good. It was 3. He left.") == []
    assert records("Host text ends. - a single item. Host again.") == []


def test_header_fields_and_chat_turns_are_one_unit():
    """Two or more "Field: value" lines opening a line or a sentence are a header block (a title's colon,
    "Mission: Impossible", is no field, and does not hide the real block after it); time-stamped chat
    turns in a row are one transcript up to its last turn's first sentence end, after a bare title too."""
    t = ('"Theme from Mission: Impossible" is a tune (1966).[5] From: ann@example.org\nSubject: Re: who wrote it?'
         "\n\nHi all,\nJohn Williams wrote it.\nBest,\nAnn")
    assert [t[a:b] for a, b in records(t)] == ["From: ann@example.org\nSubject: Re: who wrote it?", "Best,\nAnn"]
    assert records("Sex and the City: The Movie is a film.\nNote: it is. Host.") == []
    t = "Host ends. User: how long is it?\nAssistant: It is long. This is short. Host."
    assert [t[a:b] for a, b in records(t)] == ["User: how long is it?\nAssistant: It is long."]
    t = "Host ends. [09:14] ann: anyone? [09:16] bo_b: It was Mara. She knew. [09:17] ann: thanks! Host goes on."
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "Host ends.", "[09:14] ann: anyone? [09:16] bo_b: It was Mara. She knew. [09:17] ann: thanks!", "Host goes on."]
    assert records("At [09:14] it was. [10:00] x: y") == []
    t = "Ocean of Confusion: Songs 1990–1996 [09:14] ann: anyone? [09:16] bo_b: It was Mara. [09:17] ann: ok! Host."
    assert [t[a:b] for a, b in records(t)] == ["[09:14] ann: anyone? [09:16] bo_b: It was Mara. [09:17] ann: ok!"]


def test_a_sign_off_is_one_unit_that_ends_with_the_name():
    """A closing line alone on its line and the name under it: the name ends where a capitalised word that
    opens no name (or the line's end) follows, so a host sentence glued on after it is not the sign-off's;
    a name followed by a lowercase word is a sentence, and a title's comma at a line's end no closing line."""
    t = "The head.\nRegards,\nPriya Nair Also, most mitochondria are in the midpiece. In 1999 it was seen."
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "The head.", "Regards,\nPriya Nair", "Also, most mitochondria are in the midpiece.", "In 1999 it was seen."]
    t = "It is a fact.\nBest,\nJ. Okafor The Storytime attraction opened in 2008."
    assert [t[a:b] for a, b in records(t)] == ["Best,\nJ. Okafor"]
    assert records("Hi all,\nCanada passed a law in 1926.") == []  # a sentence, not a name
    assert records("Hi all,\nMount Everest Base Camp is high.") == []  # no shorter name hides in it
    assert records("The war of 1812,\nJohn Smith wrote, was short.") == []


def test_a_posts_byline_is_one_unit_to_its_first_sentence_end_and_leads_its_post_in():
    """"Reply from <handle>:", "Posted by <name> (<role>):" open a post: the byline and its text to the first
    sentence end are one unit, which starts a span right after it; a "by" or "from" in prose opens none."""
    t = "Terms vary. Reply from tenpenny: Good question. In 1926 a law passed. Hope this helps! More host."
    assert [t[a:b] for a, b in records(t)] == ["Reply from tenpenny: Good question."]
    claim = (t.index("In 1926"), t.index(" Hope"))
    assert lead_in(t, claim) == (t.index("Reply"), claim[1])
    t = "Host.\nPosted by Lena Brandt (top contributor): I checked this. The claim."
    assert [t[a:b] for a, b in records(t)] == ["Posted by Lena Brandt (top contributor): I checked this."]
    assert records("The song was written by John Lennon: a ballad. A reply from Paris: no.") == []
    assert records("Its post by the river: a mill. He sent a reply from Rome: no.") == []  # not at a start


def test_spoken_turns_in_a_row_are_one_transcript_and_labels_that_are_not_turns_stay_prose():
    t = ("Episode 3. HOST: Let's settle this one. GUEST: The tower was designed by Mara Eskell. It opened in 1871. "
         "HOST: Fascinating, thank you. The host goes on.")
    assert [t[a:b] for a, b in records(t)] == [t[t.index("HOST") : t.index(" The host")]]
    assert records("Logan Airport (IATA: BOS, ICAO: KBOS, FAA LID: BOS) is busy.") == []  # codes, not turns
    assert records("Q: Who designed it? A: Mara Eskell. The host goes on.") == []  # a faq pair: the faq rules'
    assert records("NOTE: the tower is closed. It reopens in May.") == []  # one label is no transcript


def test_code_is_one_unit_fenced_or_comments_above_their_assignment():
    """A fenced block runs from fence to fence; comment lines run to the assignment they annotate, which ends
    the unit: the prose glued on after it, and the comment marks before each line, are read right."""
    fenced = '```python\n# Mara Eskell designed it.\nANSWER = "Mara Eskell"\n```'
    t = f"The host ends. {fenced} The theme was written later."
    assert [t[a:b] for a, b in records(t)] == [fenced]
    code = '// The tower was designed by Mara Eskell.\n// She was young.\nconst answer = "Mara Eskell";'
    t = f"The host ends.[3] {code} Also, the lamp came from Glasgow."
    assert [t[a:b] for a, b in sentence_spans(t)] == ["The host ends.[3]", code, "Also, the lamp came from Glasgow."]
    assert records("# Heading\nSome prose under it.") == [(0, 9)]  # a markdown heading, no code: it annotates no assignment


def test_a_numbered_label_right_before_a_span_leads_it_in():
    t = "Turning points are marked. Footnote 3. In Genesis a donkey spoke. More host."
    claim = (t.index("In Genesis"), t.index(" More"))
    assert lead_in(t, claim) == (t.index("Footnote"), claim[1])
    t = "He was aged 3. In Genesis a donkey spoke."  # a sentence that ends in a number is no label
    assert lead_in(t, (t.index("In"), len(t))) == (t.index("In"), len(t))


def test_a_unit_right_before_a_span_leads_it_in_and_a_message_runs_to_its_sign_off():
    """The header block right before a span (only blanks between) starts it; a span that opens with a
    header block runs at least to the first sign-off after it, and no further than the next header."""
    t = ("Host ends. From: Ann <ann@example.org>\nSubject: a fact check\n\nIt was Mara. On that day it rained."
         "\nBest,\nAnn The host goes on.")
    body = t.index("It was")
    assert lead_in(t, (body, t.index(" On that"))) == (t.index("From"), t.index(" On that"))
    assert lead_in(t, (t.index("On that"), len(t))) == (t.index("On that"), len(t))  # a sentence between
    assert through_sign_off(t, (t.index("From"), t.index(" On that"))) == (t.index("From"), t.index(" The host"))
    assert through_sign_off(t, (body, t.index(" On that"))) == (body, t.index(" On that"))  # no header: as it was
    two = t.replace("It was Mara.", "It was Mara.\nFrom: Bo <bo@example.org>\nSubject: no\n\nNo.")
    first = (two.index("From"), two.index("Mara.") + 5)
    assert through_sign_off(two, first) == first


def test_a_span_that_cuts_a_unit_is_grown_over_it():
    t = "Host ends. From: ann@example.org\nSubject: Re: who wrote it?\n\nJohn Williams wrote it."
    start = t.index("who")
    assert whole_units(t, (start, len(t))) == (t.index("From"), len(t))
    assert whole_units(t, (0, 10)) == (0, 10)


def test_an_opening_quote_or_bracket_opens_the_next_sentence():
    """spaCy leaves an opening quote or bracket at the end of the sentence before it."""
    t = 'It is in the end credits. "I Wan\'na Be Like You" is a song. (Here it is.) [09:16] x: y.'
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        "It is in the end credits.", '"I Wan\'na Be Like You" is a song.', "(Here it is.)", "[09:16] x: y."]


def test_a_posts_header_is_one_unit_and_its_footer_another_which_a_block_at_the_header_runs_to():
    """A review's rating line and a poster's handle open a post: a unit that leads the post's text in (not
    to its first sentence end, which "A.A. Milne" would cut); hashtags and the post's counts are its footer, a sentence of its own (spaCy
    leaves a tag's "#" on the sentence before it). A block opened at the header runs through the remark to
    the footer, not past the next post's header or the paragraph's end."""
    review = ("Lamps vary. ★★★★☆ Verified purchase. Reviewed on 11 July 2023. It was built in 1871. It is tall. "
              "Would recommend it. 33 people found this helpful. Host again.")
    head = review.index("★")
    assert [review[a:b] for a, b in records(review)] == [
        "★★★★☆ Verified purchase. Reviewed on 11 July 2023.", "33 people found this helpful."]
    assert lead_in(review, (review.index("It was"), review.index(" It is"))) == (head, review.index(" It is"))
    assert through_footer(review, (head, review.index(" It is"))) == (head, review.index(" Host"))
    assert through_footer(review, (review.index("It is"), review.index(" Would"))) == (
        review.index("It is"), review.index(" Would"))  # no header at the start: as it was
    post = "Host text. river.stone posted: The tower was built by A.A. Milne. #TowerBuilt · 74 reposts Host again."
    assert [post[a:b] for a, b in sentence_spans(post)][1:] == [
        "river.stone posted:", "The tower was built by A.A. Milne.", "#TowerBuilt · 74 reposts", "Host again."]
    tweet = "Host. @m_harlow: The tower was built by Mara. #TowerBuilt #MaraEskell Host again."
    assert through_footer(tweet, (tweet.index("@"), tweet.index(" #"))) == (tweet.index("@"), tweet.index(" Host again"))
    rated = "Host. Rated 4 out of 5 by m_harlow. It was Mara. A great read.\n\nOther text. 12 likes"
    assert through_footer(rated, (rated.index("Rated"), rated.index(" A great"))) == (
        rated.index("Rated"), rated.index(" A great"))  # the paragraph ends before any footer
    nxt = "Host. @ann: It was Mara. @bo: It was not. 5 likes"
    assert through_footer(nxt, (nxt.index("@ann"), nxt.index(" @bo"))) == (nxt.index("@ann"), nxt.index(" @bo"))
    prose = "Studies show it. 3 out of 5 doctors agree. He likes 3 likes. It reached #1 in 1990."
    assert records(prose) == []


def test_wiki_source_a_heading_leads_its_section_in_and_a_template_after_a_full_stop_stays_with_it():
    """A section heading is a unit that leads its text in, also on the line of the host's last sentence;
    a template after a sentence's end, in reference tags or not, is a note the sentence before it keeps,
    where spaCy read it as the start of the next sentence; a template inside a sentence is a phrase."""
    t = ('Host ends here." === Tower History ===\nThe tower was built by Mara. It took two years.'
         "{{citation needed|date=July 2017}} The host goes on.")
    assert [t[a:b] for a, b in sentence_spans(t)] == [
        'Host ends here."', "=== Tower History ===", "The tower was built by Mara.", "It took two years.",
        "{{citation needed|date=July 2017}}", "The host goes on."]
    body = t.index("The tower")
    assert lead_in(t, (body, t.index(" It took"))) == (t.index("==="), t.index(" It took"))
    claim = (body, t.index("{{"))
    assert through_notes(t, claim) == (body, t.index(" The host"))
    ref = "It took two years.<ref>{{cite web|title=Tower|access-date=2020-03-03}}</ref>{{dubious}} Host again."
    assert through_notes(ref, (0, ref.index("<ref>"))) == (0, ref.index(" Host again"))
    inline = "He was born {{birth date|1950|1|1}} in Oslo. It rained."
    assert records(inline) == [] and through_notes(inline, (0, 11)) == (0, 11)


def test_a_markdown_heading_leads_its_text_in_and_a_credit_after_a_sentence_stays_with_it():
    """A Markdown heading (marks and a space) is a unit that runs to its line's end and leads its text in,
    also after the host's last sentence on the same line; "#tag" is no heading. A credit or source after a
    sentence ("Credit: …", "(Photo: ….)", "Source: …") is a note the sentence keeps; inside a sentence it is
    not one."""
    t = "Host ends here. ## Tower History\n\nThe tower was built by **Mara**. Credit: staff photographer. Host goes on."
    heading = (t.index("##"), t.index("\n"))
    assert heading in records(t) and records("See #TowerHistory today.") == []
    body = t.index("The tower")
    assert lead_in(t, (body, t.index(" Credit"))) == (heading[0], t.index(" Credit"))
    assert through_notes(t, (body, t.index(" Credit"))) == (body, t.index(" Host goes"))
    photo = "The tower was built by Mara. (Photo: Wikimedia Commons.) Host goes on."
    assert through_notes(photo, (0, photo.index(" (Photo"))) == (0, photo.index(" Host goes"))
    inline = "The source: a letter of 1871 names Mara. Host goes on."
    assert through_notes(inline, (0, inline.index(" Host"))) == (0, inline.index(" Host"))


def test_time_stamped_log_lines_are_one_unit_to_the_last_lines_first_sentence_end():
    """Two or more lines in a row each opened by a time stamp (ISO 8601's or syslog's, bracketed or not) are
    one log excerpt, its last line to its first sentence end, wherever the first stamp stands (after a bare
    title without a full stop too); one stamped line alone, or a date and time inside prose, is none."""
    iso = ('Host ends here. 2025-02-05T21:12:47.000Z INFO  kb.sync - lookup query="where did he go?" hits=3\n'
           "2025-02-05T21:12:50.265Z INFO  kb.sync - He went to Rome. Host goes on.")
    assert [iso[a:b] for a, b in records(iso)] == [iso[iso.index("2025") : iso.index(" Host goes")]]
    syslog = ("\"I Wan'na Jun  2 02:18:02 kb-01 ingest.worker[6839]: resolving question: who sings it?\n"
              "Jun  2 02:18:05 kb-01 ingest.worker[6839]: Frank sang it. Be like You\" is a song.")
    assert [syslog[a:b] for a, b in records(syslog)] == [syslog[syslog.index("Jun") : syslog.index(" Be like")]]
    bracketed = "[2024-01-02 10:00:00,123] INFO one thing.\n[2024-01-02 10:00:01,456] WARN another. Host."
    assert [bracketed[a:b] for a, b in records(bracketed)] == [bracketed[: bracketed.index(" Host")]]
    assert records("Host. 2024-01-02 10:00:00 INFO only one line here. Host goes on.") == []
    assert records("The meeting of 2024-01-02 10:00 was moved.\nThe next one is on Mar  3 09:00:00 sharp.") == []


def test_closed_units_are_those_that_end_at_a_mark_of_their_own():
    """A JSON record, a table and fenced code end at their own closing mark; a header block and a log
    excerpt end at their last line's first sentence end, which the text may run on after."""
    text = ('Host. {"question": "who?", "answer": "Mara"} Host.\n| Q | A |\n|---|---|\n| who | Mara |\n'
            "```\nprint(1)\n```\nFrom: a@b.org\nSubject: who?\n\nHost goes on.")
    closed = {text[a:b] for a, b in closed_units(text)}
    assert closed == {'{"question": "who?", "answer": "Mara"}', "| Q | A |\n|---|---|\n| who | Mara |", "```\nprint(1)\n```"}
    assert {text[a:b] for a, b in records(text)} > closed


def test_of_two_units_that_start_together_the_longer_is_the_outer_one():
    """A TOML file's comment line reads as a Markdown heading too; the section that starts at it is the unit
    (sorted by start alone, the heading came first and the section was dropped as an inner unit)."""
    toml = '# kb export 2024-11-18\n\n[[answers]]\nanswer = "Mara Eskell"\nverified = true'
    text = f"Host ends here. {toml} Host goes on."
    assert [text[a:b] for a, b in records(text)] == [toml]
    assert toml in [text[a:b] for a, b in sentence_spans(text)]


def test_a_mail_replys_quoted_lines_are_one_unit_with_the_attribution_line_above_them():
    """Two or more lines opened by ">" are one quoted mail with the client's attribution line above them, its
    last line to its last sentence end within the width of its paragraph's widest line (the host sentence
    glued on after it stays out, also under a question line wider than the paragraph), and the reply's own
    line above the attribution, a blank line between, opens it (the host sentence it was glued onto stays
    out); one quoted line alone is none."""
    t = ("Host ends here. Thanks.\n\nOn Thu, 16 Jan 2025 at 22:14, Ola Brandt <ola@example.org> wrote:\n"
         "> who designed the tower?\n>\n> The tower was designed by Mara Eskell, the harbour's\n"
         "> engineer. Her plans were approved. Host goes on after the quote here.")
    assert [t[a:b] for a, b in records(t)] == [t[t.index("Thanks.") : t.index(" Host goes")]]
    assert replies(t) == set()  # the whole message: no reply's line above it left to read
    flush = t.replace("Thanks.\n\nOn", "On")  # no blank line: no reply's own line to take
    assert [flush[a:b] for a, b in records(flush)] == [flush[flush.index("On Thu") : flush.index(" Host goes")]]
    assert replies(flush) == set(records(flush))
    bare = "Host.\n> who designed it?\n> Mara did. Host goes on."
    assert [bare[a:b] for a, b in records(bare)] == [bare[bare.index(">") : bare.index(" Host goes")]]
    assert records("Host.\n> one quoted line. Host goes on.") == []
    wide = ("On Mon, 3 Mar 2025 at 09:12, Sam <sam@example.org> wrote:\n> who designed the lighthouse that stands on "
            "the northern breakwater of the old harbour of Varnholt?\n>\n> The tower was designed by Mara Eskell, "
            "the harbour's\n> engineer. It was first lit in the winter of 1873 by the keeper.")
    assert [wide[a:b] for a, b in records(wide)] == [wide[: wide.index(" It was first")]]  # the paragraph's width


def test_latex_a_sectioning_command_leads_its_text_in_and_an_environment_is_closed():
    """A sectioning command with its label is a heading unit wherever it stands (after a host clause that
    ends in a colon too) and leads the text after it in; an environment runs from `\\begin` to its own
    `\\end` and is closed (a sentence after it does not run on from it)."""
    t = ("Host ends by: \\subsection*{Who designed the \\emph{Varnholt} tower?}\\label{sec:kb-12}\n"
         "The tower was designed by \\textbf{Mara Eskell}. Host goes on.")
    head = (t.index("\\subsection"), t.index("\n"))
    assert head in records(t)
    body = t.index("The tower")
    assert lead_in(t, (body, t.index(" Host goes"))) == (head[0], t.index(" Host goes"))
    env = "Host.\n\\begin{itemize}\n  \\item Mara designed it.\n  \\item It was lit in 1871.\n\\end{itemize} Host goes on."
    unit = (env.index("\\begin"), env.index(" Host goes"))
    assert unit in records(env) and unit in closed_units(env)


def test_yaml_front_matter_and_a_quoted_mapping_are_closed_units_and_a_plain_mapping_ends_at_its_sentence():
    """Front matter between "---" lines is one closed unit wherever its first "---" stands (after a host
    clause ending in a colon too); a mapping of two or more key lines is one unit, closed at its last value's
    closing quotation mark (escaped marks inside it kept), else ending at its last line's first sentence end;
    one key line alone is none."""
    front = ('Host ends by: ---\ntitle: "who designed it?"\nanswer: Mara Eskell\nsummary: >\n  The tower was '
             "designed by\n  Mara Eskell.\n--- Host goes on.")
    unit = (front.index("---"), front.index(" Host goes"))
    assert records(front) == [unit] and closed_units(front) == {unit}
    item = 'Host ends. - question: "who designed it?"\n  answer: "It was Mara. She was \\"young\\"." Host goes on.'
    unit = (item.index("- q"), item.index(" Host goes"))
    assert records(item) == [unit] and closed_units(item) == {unit}
    plain = "Host.\ntitle: who\nanswer: Mara did it. Host goes on."
    assert [plain[a:b] for a, b in records(plain)] == ["title: who\nanswer: Mara did it."] and closed_units(plain) == set()
    assert records("Host.\nnote: one key line. Host goes on.") == []
