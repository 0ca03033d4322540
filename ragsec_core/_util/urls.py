"""URLs that are about to be stored or shown, with their credentials taken out.

A URL read from someone else's log or incident file may carry a secret (`user:pass@host`, `?api-key=…`,
a signed `?sig=…`); a trace, an artifact and a report are shared, so what they keep of such a URL is the
part that says where the model was, never how to log in to it.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_PARAM_WORDS = ("key", "token", "secret", "sig", "password", "auth")


def is_secret_param(name: str) -> bool:
    """A query parameter or header whose name suggests a credential (`api_key`, `X-Amz-Signature`,
    `access_token`, `Authorization`): redacted from logged URLs, refused as an endpoint's extra header."""
    low = name.lower()
    return any(w in low for w in SECRET_PARAM_WORDS)


def redact_url(url: str) -> str:
    """`url` without userinfo, without query parameters that look like credentials, and without a
    fragment (it never reaches a server, and tokens hide there in OAuth flows). Anything unparseable
    becomes "" rather than being kept verbatim."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not is_secret_param(k)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
