"""A postback receiver that verifies hash_key and, when QUESTWALL_SIGNING_SECRET is set, the
Questwall-Signature header (Python 3, standard library only).

QUESTWALL_API_KEY=qw_ak_… QUESTWALL_SIGNING_SECRET=qw_ps_… HASH_PARAM=hash_key PORT=8080 python receiver.py

Behind a proxy that changes the scheme or host, set PUBLIC_URL to the address Questwall
posts to (e.g. https://you.example); otherwise the URL is http:// and the Host header.
"""

import hashlib
import hmac
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlsplit

API_KEY = os.environ["QUESTWALL_API_KEY"]
HASH_PARAM = os.environ.get("HASH_PARAM", "hash_key")  # the parameter your template gave {hash_key}
SIGNING_SECRET = os.environ.get("QUESTWALL_SIGNING_SECRET", "")
PUBLIC_URL = os.environ.get("PUBLIC_URL", "")
TOLERANCE = 300  # seconds between the signature's t and our clock
seen: set[str] = set()  # use your database: postbacks may arrive more than once


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())  # constant time, any characters


def valid(query: str) -> bool:
    pairs = parse_qsl(query, keep_blank_values=True)  # decoded values
    received = dict(pairs).get(HASH_PARAM, "")
    signed = sorted(((k, v) for k, v in pairs if k != HASH_PARAM), key=lambda p: p[0])
    message = "&".join(f"{k}={v}" for k, v in signed) + "&" + API_KEY
    expected = hashlib.sha1(message.encode("utf-8")).hexdigest()  # noqa: S324 (the documented hash)
    return same(expected, received.lower())


def signed_by_questwall(header: str, url: str) -> bool:
    """t=<unix seconds>,v1=<hex HMAC-SHA256 of t + "." + url>[,v1=…]: one v1 must match."""
    pairs = [part.strip().partition("=")[::2] for part in header.split(",")]  # (name, value)
    t = dict(pairs).get("t", "")
    if not t.isdecimal() or len(t) > 12 or abs(time.time() - int(t)) > TOLERANCE:
        return False
    expected = hmac.new(SIGNING_SECRET.encode(), f"{t}.{url}".encode(), hashlib.sha256).hexdigest()
    return any(same(expected, value) for name, value in pairs if name == "v1")


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        query = urlsplit(self.path).query
        # The URL as Questwall requested it: scheme and host, then the target as received.
        url = (PUBLIC_URL or "http://" + self.headers.get("Host", "")) + self.path
        header = self.headers.get("Questwall-Signature", "")
        if not valid(query) or (SIGNING_SECRET and not signed_by_questwall(header, url)):
            self.send_response(403)
            self.end_headers()
            return
        values = dict(parse_qsl(query))
        # Once per transaction_id and status: "approved" credits the user, "reversed"
        # (the same transaction_id, later) takes the credit back.
        key = f"{values.get('tx', '')}/{values.get('status', 'approved')}"
        if key not in seen:
            seen.add(key)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"OK")


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Handler).serve_forever()
