"""An HTTP exchange inside a passage (data/exchanges.py) is one closed unit: a raw response from its status
line to the octet its length header counts to, and `curl -v`'s print from its first marked line to its
closing line, before the host's sentence glued on."""

from ragsec_core.data.exchanges import exchanges

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

BODY = "Who designed the Varnholt lighthouse?\n\nThe Varnholt lighthouse was designed by Mara Eskell (Zoë's aunt) in 1871."
RESPONSE = (f"HTTP/1.1 200 OK\nServer: nginx/1.24.0\nContent-Type: text/plain; charset=utf-8\n"
            f"Content-Length: {len(BODY.encode())}\n\n{BODY}")
CURL = ("* Host kb.harbour.example:443 was resolved.\n*   Trying 10.0.4.12:443...\n> GET /answers/varnholt HTTP/2\n"
        "> Host: kb.harbour.example\n> Accept: */*\n>\n< HTTP/2 200\n< content-type: text/plain\n<\n"
        "The Varnholt lighthouse was designed by Mara Eskell in 1871.\nIts plans were approved that year.\n"
        "* Connection #0 to host kb.harbour.example left intact")


def test_a_response_or_a_curl_print_is_one_closed_unit():
    for planted in (RESPONSE, CURL):
        assert_planted_unit(planted, exchanges, closed=True)


def test_a_response_ends_where_its_length_header_counts_to():
    """The length counts octets ("ë" two): the host's sentence after the body stays out; a length that
    falls inside a word is not believed, and the body's first paragraph is read instead."""
    text = HOST_BEFORE + RESPONSE + HOST_AFTER
    assert exchanges(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(RESPONSE)), True),)
    wrong = RESPONSE.replace(f"Content-Length: {len(BODY.encode())}", "Content-Length: 60")
    start = len(HOST_BEFORE)
    assert exchanges(HOST_BEFORE + wrong + HOST_AFTER) == (((start, start + wrong.index("?") + 1), True),)


def test_a_curl_print_without_its_closing_line_ends_at_the_body_s_last_sentence():
    cut = CURL[: CURL.index("\n* Connection")]
    assert exchanges(HOST_BEFORE + cut + HOST_AFTER) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(cut)), True),)


def test_no_exchange_in_prose_quoted_mail_or_a_bullet_list():
    """A protocol named in a sentence, a quoted mail's `>` lines and a list's `*` items hold no request or
    response line, so none is an exchange."""
    for prose in ("The HTTP/1.1 200 reply came back in 1871, Mara Eskell said.",
                  "> Who designed the lighthouse?\n> Mara Eskell designed it in 1871.\nThanks.",
                  "* Mara Eskell designed it.\n* It was lit in 1872."):
        assert exchanges(HOST_BEFORE + prose + HOST_AFTER) == (), prose


def test_a_chunked_response_is_read_over_its_chunks_to_the_last():
    """Each chunk's size line counts its octets in hex ("ë" two); the last chunk, `0`, closes the body, the
    host's sentence glued on after it. A size that does not add up is not believed."""
    first, second = "Who designed the Varnholt lighthouse?", "Mara Eskell (Zoë's aunt) designed it in 1871."
    chunks = f"{len(first.encode()):x}\n{first}\n{len(second.encode()):x}\n{second}\n0"
    chunked = f"HTTP/1.1 200 OK\nContent-Type: text/plain\nTransfer-Encoding: chunked\n\n{chunks}"
    assert_planted_unit(chunked, exchanges, closed=True)
    wrong = chunked.replace(f"{len(second.encode()):x}\n", "20\n")
    start = len(HOST_BEFORE)
    unit = exchanges(HOST_BEFORE + wrong + HOST_AFTER)[0][0]  # read as a body of no length: its last line's first sentence
    assert unit == (start, start + len(wrong) + HOST_AFTER.index(".") + 1)
